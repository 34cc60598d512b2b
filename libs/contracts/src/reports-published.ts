import { TRAFFICS, type Traffic } from './recommendation-event.dto.js';
import { TIME_RANGES, type TimeRange } from './reporting.dto.js';

/**
 * Payload of the core-NATS broadcast `BroadcastSubjects.reportsPublished` (`reporting.v1.published`).
 * Empty: a publication cycle replaced every scope's snapshot, so every cache of reports and series
 * drops everything. A scope: only that scope's report and series were (first) prepared, so caches
 * drop that scope alone (under mixed load a preparation per second dropped 2,400 cached reports).
 */
export interface ReportsPublishedMessage {
  agent_id: string;
  traffic: Traffic;
  time_range: TimeRange;
}

/** The body announcing a cycle (empty) or the preparation of one scope. */
export function encodeReportsPublished(scope?: ReportsPublishedMessage): Uint8Array {
  if (!scope) return new Uint8Array();
  const message: ReportsPublishedMessage = { agent_id: scope.agent_id, traffic: scope.traffic, time_range: scope.time_range };
  return new TextEncoder().encode(JSON.stringify(message));
}

/** The scope a message names, or null: a cycle (empty body) or a body that cannot be read (caches then drop everything). */
export function decodeReportsPublished(data: Uint8Array): ReportsPublishedMessage | null {
  if (data.length === 0) return null;
  try {
    const parsed = JSON.parse(new TextDecoder().decode(data)) as Partial<Record<keyof ReportsPublishedMessage, unknown>> | null;
    const { agent_id, traffic, time_range } = parsed ?? {};
    if (typeof agent_id !== 'string' || !TRAFFICS.includes(traffic as Traffic) || !TIME_RANGES.includes(time_range as TimeRange)) return null;
    return { agent_id, traffic: traffic as Traffic, time_range: time_range as TimeRange };
  } catch {
    return null;
  }
}
