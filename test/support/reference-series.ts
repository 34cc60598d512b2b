import { referenceReport, type ModelCounters, type ModelEvent, type ModelScope } from './reference-model.js';

/**
 * An independent, deliberately naive reference of report series (DESIGN §7), sharing no code
 * with apps/reporting-projection (nor luxon): local calendars are read minute by minute from
 * the runtime's Intl (ICU tz data), bucket edges found by scanning, and each bucket's figures
 * computed by the reference report model over the bucket as a period.
 */

const MINUTE = 60_000;

export type Granularity = 'hour' | 'day';
export type ModelFigures = Pick<ModelCounters, 'exposures' | 'clicks' | 'engagements' | 'conversions' | 'earnings_micros'>;
export interface ModelBucket extends ModelFigures {
  start_at: string;
  end_at: string;
}

const FIGURES = ['exposures', 'clicks', 'engagements', 'conversions', 'earnings_micros'] as const;

/**
 * The local calendar of a zone over a window, scanned minute by minute:
 * - a day edge is a minute whose local date differs from the minute before's;
 * - an hour edge is a minute at which the local clock shows a whole hour, or whose UTC offset
 *   differs from the minute before's (a clock change).
 */
export class ReferenceCalendar {
  private readonly dayEdges: number[] = [];
  private readonly hourEdges: number[] = [];

  constructor(
    readonly zone: string,
    readonly from: Date,
    readonly to: Date,
  ) {
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    const read = (instant: number) => {
      const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, p.value]));
      const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
      return { date: `${parts.year}-${parts.month}-${parts.day}`, minute: Number(parts.minute), second: Number(parts.second), offset: wall - instant };
    };
    let previous = read(from.getTime() - MINUTE);
    for (let t = from.getTime(); t <= to.getTime(); t += MINUTE) {
      const now = read(t);
      if (now.date !== previous.date) this.dayEdges.push(t);
      if ((now.minute === 0 && now.second === 0) || now.offset !== previous.offset) this.hourEdges.push(t);
      previous = now;
    }
  }

  /** The edges strictly inside (start, end). */
  edges(granularity: Granularity, start: Date, end: Date): number[] {
    this.cover(start, end);
    const list = granularity === 'day' ? this.dayEdges : this.hourEdges;
    return list.filter((t) => t > start.getTime() && t < end.getTime());
  }

  /** The start of the local date holding `instant`: the last day edge at or before it. */
  localDayStart(instant: Date): number {
    this.cover(instant, instant);
    const edges = this.dayEdges.filter((t) => t <= instant.getTime());
    if (edges.length === 0) throw new Error(`the calendar of ${this.zone} does not reach back to the day of ${instant.toISOString()}`);
    return edges[edges.length - 1];
  }

  private cover(start: Date, end: Date): void {
    if (start < this.from || end > this.to) {
      throw new Error(`the calendar of ${this.zone} covers ${this.from.toISOString()}–${this.to.toISOString()}, not ${start.toISOString()}–${end.toISOString()}`);
    }
  }

  /** The buckets of [start, end): the period's ends and every edge inside. */
  buckets(granularity: Granularity, start: Date, end: Date): { start: number; end: number }[] {
    if (!(start < end)) return [];
    const edges = [start.getTime(), ...this.edges(granularity, start, end), end.getTime()];
    return edges.slice(1).map((edge, i) => ({ start: edges[i], end: edge }));
  }
}

function figuresOf(counters: ModelCounters): ModelFigures {
  return Object.fromEntries(FIGURES.map((name) => [name, counters[name]])) as unknown as ModelFigures;
}

/**
 * The series of one scope: for `all` (start null) from the local day of the first minute in
 * which anything of the five figures is counted for the scope (none: no buckets).
 */
export function referenceSeries(events: ModelEvent[], scope: ModelScope, granularity: Granularity, calendar: ReferenceCalendar): ModelBucket[] {
  let start = scope.start;
  if (start === null) {
    const minutes = [
      ...new Set(
        events
          .filter((e) => e.type === 'recommendation' && e.agent_id === scope.agent_id && e.traffic === scope.traffic)
          .map((e) => Math.floor(Date.parse((e as { recommendation_created_at: string }).recommendation_created_at) / MINUTE) * MINUTE)
          .filter((m) => m < scope.end.getTime()),
      ),
    ].sort((x, y) => x - y);
    const first = minutes.find((m) => {
      const figures = figuresOf(referenceReport(events, { ...scope, start: new Date(m), end: new Date(m + MINUTE) }));
      return FIGURES.some((name) => figures[name] !== 0);
    });
    if (first === undefined) return [];
    start = new Date(calendar.localDayStart(new Date(first)));
  }
  return calendar.buckets(granularity, start, scope.end).map((bucket) => ({
    start_at: new Date(bucket.start).toISOString(),
    end_at: new Date(bucket.end).toISOString(),
    ...figuresOf(referenceReport(events, { ...scope, start: new Date(bucket.start), end: new Date(bucket.end) })),
  }));
}
