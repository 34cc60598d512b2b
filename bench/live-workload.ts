/**
 * The live event stream of bench:mixed and bench:soak, and its reference model. Recommendations
 * are created "now" and numbered r = 0, 1, 2…: platform r mod P, traffic test for a fifth of
 * them. Every recommendation's history is a function of (r, its creation time) only, so the
 * publisher keeps nothing but the creation times, and the benchmark rebuilds the model events of
 * everything published once the run is over (test/support/reference-model.ts).
 *
 * Per recommendation: generated (and shown, or mentioned, unless it is never exposed) at once;
 * LATE_AFTER recommendations later, its clicks, engagements, conversions, accounting entries
 * (some in EUR, some reversals, a few naming no recommendation) and now and then a copy of its
 * shown event under another Nats-Msg-Id (stored twice: the projection must drop it by event_id).
 * Every WATERMARK_EVERY_MS a reconciliation watermark (alternating traffic, a third of them for
 * one platform). About 2.3 events per recommendation.
 */
import type { ModelEvent } from '../test/support/reference-model.js';

export interface LiveEvent {
  subject: string;
  /** Nats-Msg-Id. */
  msgId: string;
  payload: Record<string, unknown>;
}

/** Recommendations between a recommendation's first events and its later ones. */
export const LATE_AFTER = 1000;
export const WATERMARK_EVERY_MS = 5000;

export const liveAgent = (p: number) => `agent_live_${String(p).padStart(3, '0')}`;

interface Generated {
  event: LiveEvent;
  model: ModelEvent;
  late: boolean;
}

/** The whole history of recommendation r created at `createdMs`, first and later events. */
function historyOf(r: number, platforms: number, createdMs: number): Generated[] {
  const agent = liveAgent(r % platforms);
  const q = Math.floor(r / platforms);
  const traffic: 'live' | 'test' = q % 5 === 0 ? 'test' : 'live';
  const id = `rec_live_${r}`;
  const created = new Date(createdMs).toISOString();
  const billable = r % 3 === 0;
  const out: Generated[] = [];
  const lifecycle = (kind: 'generated' | 'shown' | 'mentioned' | 'clicked' | 'engaged' | 'converted', late: boolean, offsetMs: number) => {
    const eventId = `evt_live_${r}_${kind}`;
    const payload = {
      event_id: eventId,
      recommendation_id: id,
      agent_id: agent,
      traffic,
      recommendation_created_at: created,
      occurred_at: new Date(createdMs + offsetMs).toISOString(),
      ...(billable && kind === 'clicked' ? { billable: true } : {}),
    };
    out.push({ event: { subject: `events.recommendation.${kind}`, msgId: eventId, payload }, model: { type: 'recommendation', kind, ...payload }, late });
    return { eventId, payload };
  };
  const entry = (entryId: string, recommendationId: string | null, amount: number, currency: string) => {
    const payload = { entry_id: entryId, agent_id: agent, traffic, recommendation_id: recommendationId, amount_micros: amount, currency, recorded_at: new Date(createdMs + 10).toISOString() };
    out.push({ event: { subject: 'events.accounting.entry', msgId: entryId, payload }, model: { type: 'accounting', ...payload }, late: true });
  };

  lifecycle('generated', false, 0);
  let exposure: ReturnType<typeof lifecycle> | undefined;
  if (r % 7 !== 0) exposure = lifecycle(r % 11 === 0 ? 'mentioned' : 'shown', false, 1);
  if (r % 4 === 0) lifecycle('clicked', true, 500);
  if (r % 8 === 0) lifecycle(r % 16 === 0 ? 'converted' : 'engaged', true, 501);
  if (billable && r % 4 === 0 && r % 5 !== 0) entry(`acc_live_${r}`, id, r % 41 === 0 ? -250_000 : 100_000 + (r % 1000), r % 29 === 0 ? 'EUR' : 'USD');
  if (r % 97 === 0) entry(`acc_live_${r}_unattributed`, null, 50_000, 'USD');
  if (exposure && r % 50 === 0) {
    const copy = exposure.payload;
    out.push({ event: { subject: `events.recommendation.${r % 11 === 0 ? 'mentioned' : 'shown'}`, msgId: `${exposure.eventId}#copy`, payload: copy }, model: { type: 'recommendation', kind: r % 11 === 0 ? 'mentioned' : 'shown', ...copy }, late: true });
  }
  return out;
}

function watermarkOf(n: number, platforms: number, nowMs: number): { event: LiveEvent; model: ModelEvent } {
  const eventId = `wm_live_${n}`;
  const traffic = n % 2 === 0 ? 'live' : 'test';
  const payload = {
    event_id: eventId,
    traffic,
    reconciled_through: new Date(Math.floor(nowMs / 60_000) * 60_000 - 60_000).toISOString(),
    ...(n % 3 === 2 ? { agent_id: liveAgent((n * 37) % platforms) } : {}),
  };
  return { event: { subject: 'events.accounting.reconciled', msgId: eventId, payload }, model: { type: 'reconciled', ...payload } as ModelEvent };
}

/** The stream as the publisher draws it: `next()` until stopping, then `rest()` (the later events still owed). */
export class LiveStream {
  /** Creation time of recommendation r (ms), for the model. */
  readonly created: number[] = [];
  readonly watermarks: ModelEvent[] = [];
  private readonly ready: LiveEvent[] = [];
  private readReady = 0;
  private readonly late = new Map<number, LiveEvent[]>();
  private lastWatermarkMs = 0;

  constructor(private readonly platforms: number) {}

  next(): LiveEvent {
    if (this.readReady === this.ready.length) {
      this.ready.length = 0;
      this.readReady = 0;
      const now = Date.now();
      if (now - this.lastWatermarkMs >= WATERMARK_EVERY_MS) {
        this.lastWatermarkMs = now;
        const watermark = watermarkOf(this.watermarks.length, this.platforms, now);
        this.watermarks.push(watermark.model);
        this.ready.push(watermark.event);
      }
      const r = this.created.length;
      // A second in the past, as a producer's clock would have it when the event reaches JetStream.
      const createdMs = now - 1000;
      this.created.push(createdMs);
      const history = historyOf(r, this.platforms, createdMs);
      for (const item of history) if (!item.late) this.ready.push(item.event);
      const late = history.filter((item) => item.late).map((item) => item.event);
      if (late.length > 0) this.late.set(r, late);
      const due = this.late.get(r - LATE_AFTER);
      if (due) {
        this.ready.push(...due);
        this.late.delete(r - LATE_AFTER);
      }
    }
    return this.ready[this.readReady++];
  }

  /** Everything drawn but not returned yet, and the later events of the last recommendations. */
  rest(): LiveEvent[] {
    const rest = this.ready.slice(this.readReady);
    this.ready.length = 0;
    this.readReady = 0;
    for (const events of this.late.values()) rest.push(...events);
    this.late.clear();
    return rest;
  }
}

/** The model events of a whole published stream (duplicates included: the model drops them). */
export function liveModelEvents(platforms: number, created: ArrayLike<number>, watermarks: ModelEvent[]): ModelEvent[] {
  const events: ModelEvent[] = [...watermarks];
  for (let r = 0; r < created.length; r++) for (const item of historyOf(r, platforms, created[r])) events.push(item.model);
  return events;
}
