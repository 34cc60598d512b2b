import fc from 'fast-check';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import {
  Durables,
  RECOMMENDATION_EVENT_KINDS,
  RpcSubjects,
  Streams,
  type PayoutBalancesReply,
  type ReportReply,
} from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import {
  connectStackProducer,
  checkProperty,
  fuzzSeed,
  readDeadLetters,
  startPayoutsRead,
  startReportingProjection,
  useTestStack,
  waitFor,
  type Producer,
} from '../support/index.js';

/**
 * Hostile events on every subject the services consume (events.recommendation.<kind>,
 * events.accounting.*, events.payouts.*, and subjects nobody knows), with reporting-projection
 * and payouts-read running: random bytes, random JSON, truncated events, valid events with one
 * field removed or of the wrong type, prototype-pollution keys, large payloads. Every one of them
 * must land on DEAD_LETTERS exactly once, recognized as invalid (not after the handler failed
 * its deliveries), and the valid events published after them must still be applied.
 *
 * The seed changes with every run and is printed at start; FUZZ_SEED=<n> replays a run (the
 * seed is printed when a property fails too).
 */
const SEED = fuzzSeed('event-fuzz');
const RUNS = 4;

const stack = useTestStack();
let producer: Producer;
let rpc: ClientProxy;

beforeAll(async () => {
  stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 300 }));
  stack.track(await startPayoutsRead({ ...stack.urls, PAYOUTS_CACHE_TTL_MS: 0 }));
  producer = await connectStackProducer(stack);
  rpc = new NatsRpcClient({ connection: producer.connection, timeoutMs: 5000 });
});

// ─────────────────────────── what the services accept ───────────────────────────

// Two days before the run: inside the reporting store's restatement window whenever the suite runs.
const AT = new Date(Math.floor(Date.now() / 1000) * 1000 - 2 * 86_400_000 + 120).toISOString();

type FieldKind = 'id' | 'traffic' | 'timestamp' | 'integer' | 'version' | 'currency' | 'enum' | 'array';

interface EventShape {
  subject: string;
  /** A valid payload; `n` makes its ids unique. */
  valid: (n: string) => Record<string, unknown>;
  /** Required fields (never nullable) and what kind of value each must be. */
  required: Record<string, FieldKind>;
}

const recommendation = (kind: string): EventShape => ({
  subject: `events.recommendation.${kind}`,
  valid: (n) => ({ event_id: `evt_${n}`, recommendation_id: `rec_${n}`, agent_id: 'agent_fuzz', traffic: 'live', recommendation_created_at: AT, occurred_at: AT }),
  required: { event_id: 'id', recommendation_id: 'id', agent_id: 'id', traffic: 'traffic', recommendation_created_at: 'timestamp', occurred_at: 'timestamp' },
});

const SHAPES: EventShape[] = [
  ...RECOMMENDATION_EVENT_KINDS.map(recommendation),
  {
    subject: 'events.accounting.entry',
    valid: (n) => ({ entry_id: `acc_${n}`, agent_id: 'agent_fuzz', traffic: 'test', recommendation_id: `rec_${n}`, amount_micros: 1_000, currency: 'USD', recorded_at: AT }),
    required: { entry_id: 'id', agent_id: 'id', traffic: 'traffic', amount_micros: 'integer', recorded_at: 'timestamp' },
  },
  {
    subject: 'events.accounting.reconciled',
    valid: (n) => ({ event_id: `wm_${n}`, traffic: 'live', reconciled_through: AT }),
    required: { event_id: 'id', traffic: 'traffic', reconciled_through: 'timestamp' },
  },
  {
    subject: 'events.payouts.balance',
    valid: () => ({ agent_id: 'agent_fuzz', currency: 'USD', pending_micros: 1, available_micros: 2, locked_micros: 3, paid_out_micros: 4, updated_at: AT, version: 1 }),
    required: { agent_id: 'id', currency: 'currency', pending_micros: 'integer', available_micros: 'integer', locked_micros: 'integer', paid_out_micros: 'integer', updated_at: 'timestamp', version: 'version' },
  },
  {
    subject: 'events.payouts.readiness',
    valid: () => ({ agent_id: 'agent_fuzz', setup_status: 'complete', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: AT, version: 1 }),
    required: { agent_id: 'id', setup_status: 'enum', missing_fields: 'array', thresholds: 'array', updated_at: 'timestamp', version: 'version' },
  },
  {
    subject: 'events.payouts.statement',
    valid: (n) => ({
      statement_id: `st_${n}`,
      agent_id: 'agent_fuzz',
      period_start: '2026-10-01T00:00:00Z',
      period_end: '2026-11-01T00:00:00Z',
      currency: 'USD',
      status: 'PAID',
      created_at: AT,
      updated_at: AT,
      version: 1,
    }),
    required: {
      statement_id: 'id',
      agent_id: 'id',
      period_start: 'timestamp',
      period_end: 'timestamp',
      currency: 'currency',
      status: 'enum',
      created_at: 'timestamp',
      updated_at: 'timestamp',
      version: 'version',
    },
  },
];

/** Values each kind of field never accepts. */
const WRONG: Record<FieldKind, fc.Arbitrary<unknown>> = {
  id: fc.oneof(fc.constant(''), fc.constant(null), fc.integer(), fc.boolean(), fc.constant('x'.repeat(201)), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })),
  traffic: fc.oneof(fc.string().filter((s) => s !== 'live' && s !== 'test'), fc.constant(null), fc.integer(), fc.constant(['live'])),
  timestamp: fc.oneof(
    fc.constantFrom('2026-11-25', '2026-11-25T10:15:42+02:00', '2026-11-25 10:15:42Z', '2026-13-45T99:99Z', 'yesterday', ''),
    fc.integer(),
    fc.constant(null),
  ),
  integer: fc.oneof(fc.constant(1.5), fc.constant('100'), fc.constant(2 ** 53), fc.constant(null), fc.boolean(), fc.double({ noInteger: true })),
  version: fc.oneof(fc.constant(-1), fc.constant(0.5), fc.constant('1'), fc.constant(null), fc.constant(2 ** 60)),
  currency: fc.oneof(fc.constantFrom('usd', 'US', 'DOLLAR', 'U$D', ''), fc.integer(), fc.constant(null)),
  enum: fc.oneof(fc.constantFrom('NOT_A_STATUS', 'paid', 'done', ''), fc.integer(), fc.constant(null)),
  array: fc.oneof(fc.constant('tax_id'), fc.integer(), fc.constant(null), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })),
};

const subjectToken = fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/);
const KNOWN_KINDS = new Set<string>(RECOMMENDATION_EVENT_KINDS);

// ─────────────────────────── hostile events ───────────────────────────

interface HostileEvent {
  subject: string;
  data: Uint8Array;
  what: string;
}

const encode = (text: string) => new TextEncoder().encode(text);

/** A valid payload on its subject with one required field removed or given a wrong value. */
const corrupted: fc.Arbitrary<HostileEvent> = fc
  .constantFrom(...SHAPES)
  .chain((shape) =>
    fc.tuple(fc.constant(shape), fc.constantFrom(...Object.keys(shape.required)), fc.boolean()).chain(([s, field, remove]) =>
      (remove ? fc.constant(undefined) : WRONG[s.required[field]]).map((value) => {
        const payload = s.valid('x');
        if (remove) delete payload[field];
        else payload[field] = value;
        return { subject: s.subject, data: encode(JSON.stringify(payload)), what: `${remove ? 'without' : 'bad'} ${field}` };
      }),
    ),
  );

/** A valid event cut short: an object without its closing brace is never valid JSON. */
const truncated: fc.Arbitrary<HostileEvent> = fc
  .constantFrom(...SHAPES)
  .chain((shape) => {
    const text = JSON.stringify(shape.valid('t'));
    return fc.integer({ min: 0, max: text.length - 1 }).map((cut) => ({ subject: shape.subject, data: encode(text.slice(0, cut)), what: `truncated at ${cut}` }));
  });

/** Any subject the services listen on, including kinds and subjects nobody knows. */
const anySubject: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SHAPES.map((s) => s.subject)),
  subjectToken.filter((t) => !KNOWN_KINDS.has(t)).map((t) => `events.recommendation.${t}`),
  subjectToken.filter((t) => !['entry', 'reconciled'].includes(t)).map((t) => `events.accounting.${t}`),
  subjectToken.filter((t) => !['balance', 'readiness', 'statement'].includes(t)).map((t) => `events.payouts.${t}`),
  subjectToken.map((t) => `events.${t}`),
);

/** Payloads that are not a JSON object of the right shape, on any subject. */
const garbage: fc.Arbitrary<HostileEvent> = fc.tuple(
  anySubject,
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => ({ data: bytes, what: 'random bytes' })),
    // Any JSON value: objects with random keys miss the required fields.
    fc.jsonValue({ maxDepth: 3 }).map((value) => ({ data: encode(JSON.stringify(value) ?? 'null'), what: 'random JSON' })),
    fc.constant({ data: encode('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'), what: 'prototype pollution' }),
    fc.constant({ data: new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), what: 'invalid UTF-8' }),
    fc.integer({ min: 1_000, max: 60_000 }).map((size) => ({ data: encode(JSON.stringify({ padding: 'p'.repeat(size) })), what: `large (${size} B)` })),
    fc.constant({ data: new Uint8Array(), what: 'empty' }),
  ),
).map(([subject, payload]) => ({ subject, ...payload }));

const hostileEvent: fc.Arbitrary<HostileEvent> = fc.oneof({ arbitrary: corrupted, weight: 3 }, { arbitrary: truncated, weight: 2 }, { arbitrary: garbage, weight: 3 });

// ─────────────────────────── checks ───────────────────────────

async function caughtUp(): Promise<void> {
  await waitFor(
    async () => {
      for (const durable of [Durables.reportingProjection, Durables.payoutsRead]) {
        const info = await producer.js.jetstreamManager().then((m) => m.consumers.info(Streams.events, durable));
        if (info.num_pending > 0 || info.num_ack_pending > 0) return false;
      }
      return true;
    },
    { timeoutMs: 60000, intervalMs: 100, what: 'both consumers caught up' },
  );
}

async function deadLetterCount(): Promise<number> {
  const manager = await producer.js.jetstreamManager();
  return (await manager.streams.info(Streams.deadLetters)).state.messages;
}

const deadLettersSince = (since: number, max: number) => readDeadLetters(producer.connection, { since, max });

const ask = <T>(subject: string, body: unknown): Promise<T> => firstValueFrom(rpc.send<T>(subject, body));

let run = 0;

it('dead-letters every hostile event exactly once and keeps applying the valid events behind them', async () => {
  await checkProperty(
    [fc.array(hostileEvent, { minLength: 15, maxLength: 45 })],
    async (events) => {
      run++;
      const agent = `agent_fz_${run}`;
      const before = await deadLetterCount();
      for (const [i, event] of events.entries()) await producer.publishRaw(event.subject, event.data, `fz_${run}_${i}`);

      // Valid events after the hostile ones: two recommendations (one clicked) and a balance.
      const created = new Date(Date.now() - 10 * 60_000).toISOString();
      const base = { agent_id: agent, traffic: 'live', recommendation_created_at: created, occurred_at: created };
      await producer.publish({ subject: 'events.recommendation.shown', id: `ok_${run}_1`, payload: { ...base, event_id: `ok_${run}_1`, recommendation_id: `r_${run}_1` } });
      await producer.publish({ subject: 'events.recommendation.clicked', id: `ok_${run}_2`, payload: { ...base, event_id: `ok_${run}_2`, recommendation_id: `r_${run}_2` } });
      const balance = { agent_id: agent, currency: 'USD', pending_micros: run, available_micros: 2, locked_micros: 3, paid_out_micros: 4, updated_at: AT, version: 1 };
      await producer.publishRaw('events.payouts.balance', JSON.stringify(balance), `ok_${run}_3`);
      await caughtUp();

      // Exactly one dead letter per hostile event, on its subject, recognized as invalid.
      const after = await deadLetterCount();
      expect(after - before).toBe(events.length);
      const letters = await deadLettersSince(before, events.length);
      expect(letters.map((l) => l.subject).sort()).toEqual(events.map((e) => `deadletter.${e.subject}`).sort());
      for (const letter of letters) expect(letter.reason).not.toMatch(/^handler failed after/);

      // The valid events behind them were applied by both services.
      const balances = await ask<PayoutBalancesReply>(RpcSubjects.payoutsBalanceGet, { agent_id: agent });
      expect(balances).toEqual({ balances: [expect.objectContaining({ agent_id: agent, currency: 'USD', pending_micros: run })] });
      await ask<ReportReply>(RpcSubjects.reportGet, { agent_id: agent, traffic: 'live', time_range: '1d' });
      const report = await waitFor(
        async () => {
          const reply = await ask<ReportReply>(RpcSubjects.reportGet, { agent_id: agent, traffic: 'live', time_range: '1d' });
          return reply.status !== 'preparing' ? reply : undefined;
        },
        { timeoutMs: 30000, intervalMs: 200, what: `the report of ${agent}` },
      );
      expect(report).toMatchObject({ agent_id: agent, exposures: 2, clicks: 1 });
    },
    { runs: RUNS, seed: SEED },
  );
});
