/** Types of slow-first-sequencer.js (plain JavaScript: Jest loads it without a transform). */
export declare const KNOWN_DURATIONS: Record<string, number>;
export default class SlowFirstSequencer {
  constructor(options: unknown);
  sort<T extends { path: string }>(tests: T[]): T[];
}
