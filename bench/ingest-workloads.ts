/**
 * The two workloads of `bench:ingest` (DESIGN §10): `streaming` (live traffic: creation-time
 * order with a few minutes of disorder, over days) and `backfill` (30 days, fully shuffled), both
 * made of the same recommendation histories. Each yields `total` events to publish in order; `msgId` is unique per publish, so an event published twice on purpose (the
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

type Step =
  | { kind: 'generated' | 'shown' | 'mentioned' | 'clicked' | 'engaged' | 'converted'; billable?: true; lateMinutes?: number; sameIdAs?: number }
  | { kind: 'entry'; amount: 1 | -1; currency: 'USD' | 'EUR' | null; lateMinutes?: number; sameIdAs?: number; unlinked?: true };

const G: Step = { kind: 'generated' };
const SHOWN: Step = { kind: 'shown' };
const CLICKED: Step = { kind: 'clicked' };
const CONVERTED: Step = { kind: 'converted', billable: true };
const USD: Step = { kind: 'entry', amount: 1, currency: 'USD' };

/** The 14 kinds of history; a repeated callback is a new event. */
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
  { name: 'engaged after a mention', steps: [G, SHOWN, { kind: 'mentioned' }, CLICKED, { kind: 'engaged' }] },
  { name: 'engaged, clicks repeated', steps: [G, SHOWN, CLICKED, CLICKED, { kind: 'engaged' }, CLICKED] },
];

/**
 * Which history each group of PLATFORMS consecutive recommendations follows: the first 12 once
 * each, 3 × "engaged after a mention", 10 × "engaged, clicks repeated". Per recommendation that
 * is 4.68 lifecycle events and 0.52 accounting entries: 10 % of the events are entries.
 */
const PATTERN: readonly number[] = [...Array.from({ length: 12 }, (_, i) => i), 12, 12, 12, ...Array.from({ length: 10 }, () => 13)];

const historyOf = (r: number) => HISTORIES[PATTERN[Math.floor(r / PLATFORMS) % PATTERN.length]];

export const LIFECYCLE_PER_RECOMMENDATION =
  PATTERN.reduce((sum, h) => sum + HISTORIES[h].steps.filter((step) => step.kind !== 'entry').length, 0) / PATTERN.length;

const MINUTE_MS = 60_000;
const BACKFILL_DAYS = 30;
/** Events of a streaming recommendation arrive this many seconds apart (step s at s × STEP_S). */
const STEP_S = 20;
/** Disorder of the streaming workload: each event arrives up to this late. */
const DISORDER_MINUTES = 3;

interface Shape {
  name: string;
  description: (recommendations: number) => string;
  /** The recommendation's creation time, relative to the workload's start. */
  createdOffsetMs: (r: number, recommendations: number) => number;
  spanMs: (recommendations: number) => number;
  /** Reorders the packed (recommendation, step) pairs into publication order. */
  order: (pairs: Float64Array, recommendations: number, atOffsetMs: (pair: number) => number) => void;
}

function shuffle(pairs: Float64Array, seed: number): void {
  const next = seededRandom(seed);
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    const swap = pairs[i];
    pairs[i] = pairs[j];
    pairs[j] = swap;
  }
}

/**
 * Streaming: live traffic. Recommendations are created evenly over `days` days (a new one every
 * few seconds, each platform in turn), each history's events follow its creation 20 s apart (late
 * events days later), and everything is published in event-time order with up to 3 minutes of
 * disorder (each event delayed by a random 0–3 min).
 */
export function streamingWorkload(total: number, days = Number(process.env.STREAMING_DAYS ?? 3)): Workload {
  const span = days * 1440 * MINUTE_MS;
  return workload(total, {
    name: 'streaming',
    description: (n) =>
      `${fmtInt(n)} recommendations over ${PLATFORMS} platforms × live/test, created over ${days} days in creation order, ${LIFECYCLE_PER_RECOMMENDATION.toFixed(2)} lifecycle events per recommendation and 10 % accounting entries, generated events naming one of ${fmtInt(ADS)} ads, published in event-time order with up to ${DISORDER_MINUTES} minutes of disorder`,
    createdOffsetMs: (r, n) => Math.floor((r * span) / n),
    spanMs: () => span,
    order: (pairs, _n, atOffsetMs) => {
      const next = seededRandom(16);
      const keys = new Float64Array(pairs.length);
      for (let i = 0; i < pairs.length; i++) keys[i] = atOffsetMs(pairs[i]) + next() * DISORDER_MINUTES * MINUTE_MS;
      const index = new Uint32Array(pairs.length).map((_, i) => i);
      index.sort((a, b) => keys[a] - keys[b]);
      const copy = pairs.slice();
      for (let i = 0; i < index.length; i++) pairs[i] = copy[index[i]];
    },
  });
}

/**
 * Backfill: recommendations created over the last 30 days (consecutive recommendations 7,919
 * minutes apart, so every minute of the month has some once there are 43,200 of them), and all
 * events of all histories fully shuffled (entries before their recommendation, clicks before
 * shows, duplicates far apart).
 */
export function backfillWorkload(total: number): Workload {
  const minutes = BACKFILL_DAYS * 1440;
  return workload(total, {
    name: 'backfill',
    description: (n) =>
      `${fmtInt(n)} recommendations over ${PLATFORMS} platforms × live/test and ${BACKFILL_DAYS} days (${n >= minutes ? 'every minute' : `${fmtInt(n)} of its ${fmtInt(minutes)} minutes`}), ${LIFECYCLE_PER_RECOMMENDATION.toFixed(2)} lifecycle events per recommendation and 10 % accounting entries, generated events naming one of ${fmtInt(ADS)} ads, with repeated callbacks, late events and duplicate ids, fully shuffled`,
    createdOffsetMs: (r) => ((r * 7919) % minutes) * MINUTE_MS + (r % 60) * 1000,
    spanMs: () => minutes * MINUTE_MS,
    order: (pairs) => shuffle(pairs, 15),
  });
}

const fmtInt = (n: number) => n.toLocaleString('en-US');

/** Ads each platform shows (INGEST_ADS, default 10,000), a product per 5 ads. */
const ADS = Number(process.env.INGEST_ADS ?? 10_000);

/**
 * The ad of recommendation r (its `generated` event carries it and its product), skewed the way
 * ad serving is: a few ads in many recommendations, most in few (the cube of a uniform hash).
 */
function adOf(r: number): { ad_id: string; product_id: string } {
  let h = Math.imul(r ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  const u = ((h ^ (h >>> 16)) >>> 0) / 2 ** 32;
  const ad = Math.floor(ADS * u ** 3);
  return { ad_id: `ad_${ad}`, product_id: `prod_${Math.floor(ad / 5)}` };
}

function workload(total: number, shape: Shape): Workload {
  // (recommendation, step) pairs packed in one number, reordered; payloads are built on the fly.
  const pairs = new Float64Array(total);
  let count = 0;
  let recommendations = 0;
  for (let r = 0; count < total; r++, recommendations++) {
    const history = historyOf(r);
    for (let s = 0; s < history.steps.length && count < total; s++) pairs[count++] = r * 16 + s;
  }
  const n = recommendations;
  const stepAt = (r: number, s: number) => {
    const step = historyOf(r).steps[s];
    // A duplicate repeats its original exactly (same id, same payload).
    const original = step.sameIdAs ?? s;
    return { step, original, offsetMs: original * STEP_S * 1000 + (step.lateMinutes ?? 0) * MINUTE_MS };
  };
  shape.order(pairs, n, (pair) => {
    const r = Math.floor(pair / 16);
    return shape.createdOffsetMs(r, n) + stepAt(r, pair % 16).offsetMs;
  });
  return {
    name: shape.name,
    description: shape.description(n),
    *events() {
      const now = Date.now();
      const start = Math.floor(now / MINUTE_MS) * MINUTE_MS - shape.spanMs(n);
      const iso = (ms: number) => new Date(Math.min(ms, now)).toISOString();
      for (const pair of pairs) {
        const r = Math.floor(pair / 16);
        const s = pair % 16;
        const { step, original, offsetMs } = stepAt(r, s);
        const agent = `agent_${r % PLATFORMS}`;
        const traffic = r % 7 === 0 ? 'test' : 'live';
        const createdMs = start + shape.createdOffsetMs(r, n);
        const atMs = createdMs + offsetMs;
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
              ...(step.kind === 'generated' ? adOf(r) : {}),
            },
          };
        }
      }
    },
  };
}
