/**
 * The two workloads of `bench:ingest` (issue 15, target 3). Each yields `total` events to
 * publish in order; `msgId` is unique per publish, so an event published twice on purpose (the
 * same event_id or entry_id) is stored twice by JetStream, as a producer's retry would be.
 */
import { seededRandom } from '../apps/demo-seed/src/week/random.js';

export interface BenchEvent {
  subject: string;
  msgId: string;
  payload: object;
}

export interface Workload {
  name: string;
  description: string;
  events(): Iterable<BenchEvent>;
}

export const PLATFORMS = 20;

/** Today's workload (issue 2): 1 day, histories published round by round (mostly in order). */
export function dayWorkload(total: number): Workload {
  const recommendations = Math.round(total / 5);
  return {
    name: 'day',
    description: `${recommendations.toLocaleString('en-US')} recommendations over ${PLATFORMS} platforms and 1 day, published round by round (generated → shown → deeper), 10 % accounting`,
    *events() {
      const now = Date.now();
      const lifecycleTotal = total - total / 10;
      const kinds = ['shown', 'clicked', 'engaged', 'converted'];
      let lifecycle = 0;
      let accounting = 0;
      let i = 0;
      // Per recommendation: generated, shown, then deeper levels for some, interleaved with
      // accounting entries so that one event in ten is accounting.
      while (lifecycle < lifecycleTotal || accounting < total / 10) {
        const r = i % recommendations;
        const round = Math.floor(i / recommendations);
        i++;
        const agent = `agent_${r % PLATFORMS}`;
        const traffic = r % 7 === 0 ? 'test' : 'live';
        const created = new Date(now - ((r * 7919) % 86_400_000)).toISOString();
        if (round < 4 && lifecycle < lifecycleTotal) {
          const kind = round === 0 ? 'generated' : kinds[Math.min(round - 1 + (r % 3 === 0 ? 1 : 0), 3)];
          const id = `evt_${round}_${r}`;
          lifecycle++;
          yield {
            subject: `events.recommendation.${kind}`,
            msgId: id,
            payload: { event_id: id, recommendation_id: `rec_${r}`, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created, billable: round === 2 },
          };
        } else if (accounting < total / 10) {
          const id = `acc_${round}_${r}`;
          accounting++;
          yield {
            subject: 'events.accounting.entry',
            msgId: id,
            payload: { entry_id: id, agent_id: agent, traffic, recommendation_id: `rec_${r}`, amount_micros: 1000 + (r % 5000), currency: r % 50 === 0 ? 'EUR' : 'USD', recorded_at: created },
          };
        } else if (lifecycle < lifecycleTotal) {
          const id = `evt_dup_${round}_${r}`;
          lifecycle++;
          yield {
            subject: 'events.recommendation.shown',
            msgId: id,
            payload: { event_id: id, recommendation_id: `rec_${r}`, agent_id: agent, traffic, recommendation_created_at: created, occurred_at: created },
          };
        }
      }
    },
  };
}

type Step =
  | { kind: 'generated' | 'shown' | 'mentioned' | 'clicked' | 'engaged' | 'converted'; billable?: true; lateMinutes?: number; sameIdAs?: number }
  | { kind: 'entry'; amount: 1 | -1; currency: 'USD' | 'EUR' | null; lateMinutes?: number; sameIdAs?: number; unlinked?: true };

const G: Step = { kind: 'generated' };
const SHOWN: Step = { kind: 'shown' };
const CLICKED: Step = { kind: 'clicked' };
const CONVERTED: Step = { kind: 'converted', billable: true };
const USD: Step = { kind: 'entry', amount: 1, currency: 'USD' };

/** The 12 kinds of history of the month workload; a repeated callback is a new event. */
export const HISTORIES: readonly { name: string; steps: readonly Step[] }[] = [
  { name: 'generated only', steps: [G] },
  { name: 'shown only', steps: [G, SHOWN] },
  { name: 'shown + mentioned', steps: [G, SHOWN, { kind: 'mentioned' }] },
  { name: 'shown + clicked', steps: [G, SHOWN, CLICKED] },
  { name: 'clicked twice', steps: [G, SHOWN, CLICKED, CLICKED] },
  { name: 'engaged', steps: [G, SHOWN, CLICKED, { kind: 'engaged' }] },
  { name: 'converted with its entry', steps: [G, SHOWN, CLICKED, CONVERTED, USD] },
  { name: 'converted repeated', steps: [G, SHOWN, CONVERTED, CONVERTED, CONVERTED, USD] },
  { name: 'accounting with a reversal', steps: [G, SHOWN, CLICKED, CONVERTED, USD, { kind: 'entry', amount: -1, currency: 'USD' }, USD] },
  {
    name: 'foreign, unresolved and unlinked entries',
    steps: [G, SHOWN, CONVERTED, { kind: 'entry', amount: 1, currency: 'EUR' }, { kind: 'entry', amount: 1, currency: null }, { kind: 'entry', amount: 1, currency: 'USD', unlinked: true }],
  },
  {
    name: 'late events',
    steps: [G, SHOWN, { kind: 'clicked', lateMinutes: 2 * 1440 }, { kind: 'engaged', lateMinutes: 9 * 1440 }, { kind: 'entry', amount: 1, currency: 'USD', lateMinutes: 12 * 1440 }],
  },
  {
    name: 'duplicates of the same event id',
    steps: [G, SHOWN, { kind: 'shown', sameIdAs: 1 }, CLICKED, { kind: 'clicked', sameIdAs: 3 }, CONVERTED, USD, { kind: 'entry', amount: 1, currency: 'USD', sameIdAs: 6 }],
  },
];

const MONTH_MINUTES = 30 * 1440;

/**
 * The harder workload: recommendations created over the last 30 days (consecutive
 * recommendations 7,919 minutes apart, so every minute of the month has some once there are
 * 43,200 of them), each with one of 12 histories, and all events of all histories fully
 * shuffled (entries before their recommendation, clicks before shows, duplicates far apart).
 */
export function monthWorkload(total: number): Workload {
  // (recommendation, step) pairs packed in one number, shuffled; payloads are built on the fly.
  const pairs = new Float64Array(total);
  let count = 0;
  let recommendations = 0;
  for (let r = 0; count < total; r++, recommendations++) {
    const history = HISTORIES[Math.floor(r / PLATFORMS) % HISTORIES.length];
    for (let s = 0; s < history.steps.length && count < total; s++) pairs[count++] = r * 16 + s;
  }
  // Seeded, so that every run publishes the same order.
  const next = seededRandom(15);
  for (let i = total - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const swap = pairs[i];
    pairs[i] = pairs[j];
    pairs[j] = swap;
  }
  return {
    name: 'month',
    description: `${recommendations.toLocaleString('en-US')} recommendations over ${PLATFORMS} platforms and 30 days (${recommendations >= MONTH_MINUTES ? 'every minute' : `${recommendations.toLocaleString('en-US')} of its 43,200 minutes`}), 12 kinds of history with repeated callbacks, late events and duplicate ids, fully shuffled`,
    *events() {
      const now = Date.now();
      const monthStart = Math.floor(now / 60_000) * 60_000 - MONTH_MINUTES * 60_000;
      const iso = (ms: number) => new Date(Math.min(ms, now)).toISOString();
      for (const pair of pairs) {
        const r = Math.floor(pair / 16);
        const s = pair % 16;
        const step = HISTORIES[Math.floor(r / PLATFORMS) % HISTORIES.length].steps[s];
        const agent = `agent_${r % PLATFORMS}`;
        const traffic = r % 7 === 0 ? 'test' : 'live';
        const createdMs = monthStart + ((r * 7919) % MONTH_MINUTES) * 60_000 + (r % 60) * 1000;
        // A duplicate repeats its original exactly (same id, same payload).
        const original = step.sameIdAs ?? s;
        const atMs = createdMs + original * 1000 + (step.lateMinutes ?? 0) * 60_000;
        const id = `r${r}_${original}`;
        const msgId = `r${r}_${s}`;
        if (step.kind === 'entry') {
          const amount = step.amount * (1000 + (r % 5000));
          yield {
            subject: 'events.accounting.entry',
            msgId,
            payload: { entry_id: id, agent_id: agent, traffic, recommendation_id: step.unlinked ? null : `rec_${r}`, amount_micros: amount, currency: step.currency, recorded_at: iso(atMs) },
          };
        } else {
          yield {
            subject: `events.recommendation.${step.kind}`,
            msgId,
            payload: {
              event_id: id,
              recommendation_id: `rec_${r}`,
              agent_id: agent,
              traffic,
              recommendation_created_at: iso(createdMs),
              occurred_at: iso(atMs),
              ...(step.billable ? { billable: true } : {}),
            },
          };
        }
      }
    },
  };
}
