import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import {
  Durables,
  RpcSubjects,
  Streams,
  type PayoutBalancesReply,
  type PayoutOverviewReply,
  type PayoutPage,
  type PayoutReadiness,
  type PayoutStatement,
  type RpcReply,
} from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import {
  PAYOUT_STATUSES,
  connectStackProducer,
  expectDeadLetters,
  payoutBalanceEvent,
  payoutStatementEvent,
  readDeadLetters,
  startPayoutsRead,
  useTestStack,
  waitForConsumer,
  type Producer,
} from '../support/index.js';

/** payouts-read against real NATS and PostgreSQL: the read model and every request/reply subject. */

const balance = (agent: string, currency: string, version: number, base: number) =>
  payoutBalanceEvent(agent, currency, base, { updated_at: `2026-11-0${Math.min(version, 9)}T00:00:00Z`, version });

const STATUSES = PAYOUT_STATUSES;

const statement = payoutStatementEvent;

describe('payouts-read', () => {
  const stack = useTestStack();
  let producer: Producer;
  let rpc: ClientProxy;
  let manager: JetStreamManager;
  let msgId = 0;

  beforeAll(async () => {
    stack.track(await startPayoutsRead({ ...stack.urls, PAYOUTS_INGEST_BATCH_SIZE: 7 }));
    producer = await connectStackProducer(stack);
    rpc = new NatsRpcClient({ connection: producer.connection, timeoutMs: 5000 });
    manager = await jetstreamManager(producer.connection);
  });

  const publish = (kind: 'balance' | 'readiness' | 'statement', payload: unknown) =>
    producer.publishRaw(`events.payouts.${kind}`, JSON.stringify(payload), `p${++msgId}`);

  const caughtUp = () => waitForConsumer(producer, Streams.events, Durables.payoutsRead, { what: 'payouts consumer caught up' });

  /** A plain NATS request, as another team's client sends it: the reply is the wire envelope itself. */
  async function wire<T>(subject: string, body: unknown): Promise<RpcReply<T>> {
    const reply = await producer.connection.request(subject, JSON.stringify(body), { timeout: 5000 });
    return reply.json<RpcReply<T>>();
  }
  const result = <T>(subject: string, body: unknown): Promise<T> => firstValueFrom(rpc.send<T>(subject, body));

  describe('read model', () => {
    it('keeps the newest version of each record whatever the arrival order, ignoring duplicates and older versions', async () => {
      await publish('balance', balance('agent_v', 'USD', 3, 300));
      await publish('balance', balance('agent_v', 'USD', 1, 100));
      await publish('balance', balance('agent_v', 'EUR', 1, 10));
      await publish('balance', balance('agent_v', 'USD', 2, 200));
      await publish('balance', balance('agent_v', 'USD', 3, 999)); // same version again: ignored
      await publish('readiness', {
        agent_id: 'agent_v', setup_status: 'complete', missing_fields: [], thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
        blocked_reason: null, updated_at: '2026-11-02T00:00:00Z', version: 2,
      });
      await publish('readiness', {
        agent_id: 'agent_v', setup_status: 'in_progress', missing_fields: ['tax_id'], thresholds: [],
        blocked_reason: 'tax form missing', updated_at: '2026-11-01T00:00:00Z', version: 1,
      });
      await publish('statement', statement('agent_v', 0, 2, { status: 'PAID', blocked_reason: null }));
      await publish('statement', statement('agent_v', 0, 1, { status: 'LOCKED' }));
      // a redelivered publish inside the dedupe window (same Nats-Msg-Id) is stored once
      await producer.publishRaw('events.payouts.balance', JSON.stringify(balance('agent_v', 'EUR', 2, 20)), 'dup-1');
      await producer.publishRaw('events.payouts.balance', JSON.stringify(balance('agent_v', 'EUR', 2, 20)), 'dup-1');
      await caughtUp();

      const balances = await result<PayoutBalancesReply>(RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_v' });
      expect(balances).toEqual({
        balances: [
          { agent_id: 'agent_v', currency: 'EUR', pending_micros: 20, available_micros: 21, locked_micros: 22, paid_out_micros: 23, updated_at: '2026-11-02T00:00:00.000Z' },
          { agent_id: 'agent_v', currency: 'USD', pending_micros: 300, available_micros: 301, locked_micros: 302, paid_out_micros: 303, updated_at: '2026-11-03T00:00:00.000Z' },
        ],
      });
      const readiness = await result<PayoutReadiness>(RpcSubjects.payoutsReadinessGet, { agent_id: 'agent_v' });
      expect(readiness).toEqual({
        agent_id: 'agent_v', setup_status: 'complete', missing_fields: [], thresholds: [{ currency: 'USD', minimum_payout_micros: 50_000_000 }],
        blocked_reason: null, updated_at: '2026-11-02T00:00:00.000Z',
      });
      const st = await result<PayoutStatement>(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_v', statement_id: 'st_agent_v_00' });
      expect(st.status).toBe('PAID');
    });

    it('dead-letters invalid events with the reason and keeps consuming', async () => {
      const dlBefore = (await manager.streams.info(Streams.deadLetters)).state.messages;
      await producer.publishRaw('events.payouts.balance', '{not json', `p${++msgId}`);
      const { pending_micros: _omit, ...noPending } = balance('agent_dl', 'USD', 1, 1);
      await publish('balance', noPending);
      await publish('balance', { ...balance('agent_dl', 'USD', 1, 1), available_micros: 1.5 });
      await publish('balance', { ...balance('agent_dl', 'USD', 1, 1), version: -1 });
      await publish('statement', statement('agent_dl', 1, 1, { status: 'OPEN' }));
      await publish('statement', statement('agent_dl', 2, 1, { transfer: { transfer_reference: 'tr', status: 'settled', source_currency: 'usd' } }));
      await publish('readiness', { agent_id: 'agent_dl', setup_status: 'complete', missing_fields: 'tax_id', thresholds: [], blocked_reason: null, updated_at: '2026-11-01T00:00:00Z', version: 1 });
      await producer.publishRaw('events.payouts.teleported', JSON.stringify({ agent_id: 'agent_dl' }), `p${++msgId}`);
      await publish('balance', balance('agent_dl', 'USD', 1, 7)); // valid, after the invalid ones
      await caughtUp();

      const letters = expectDeadLetters(await readDeadLetters(producer.connection, { since: dlBefore, max: 8 }), [
        ['deadletter.events.payouts.balance', /not valid UTF-8 JSON/],
        ['deadletter.events.payouts.balance', /pending_micros/],
        ['deadletter.events.payouts.balance', /available_micros/],
        ['deadletter.events.payouts.balance', /version/],
        ['deadletter.events.payouts.statement', /status/],
        ['deadletter.events.payouts.statement', /transfer\.source_currency/],
        ['deadletter.events.payouts.readiness', /missing_fields/],
        ['deadletter.events.payouts.teleported', /unknown payout event subject/],
      ]);
      expect(letters[0].data).toBe('{not json');

      const balances = await result<PayoutBalancesReply>(RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_dl' });
      expect(balances.balances).toEqual([expect.objectContaining({ currency: 'USD', pending_micros: 7, available_micros: 8 })]);
      const list = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_dl' });
      expect(list.total).toBe(0);
    });
  });

  describe('request/reply', () => {
    // agent_a: 25 statements (months 0–24 of 2024–2026, statuses cycling), agent_b: 3.
    beforeAll(async () => {
      for (let n = 0; n < 25; n++) await publish('statement', statement('agent_a', n));
      for (let n = 0; n < 3; n++) await publish('statement', statement('agent_b', n));
      await publish('balance', balance('agent_a', 'USD', 1, 5_000_000));
      await publish('balance', balance('agent_a', 'GBP', 1, 7_000_000));
      await publish('balance', balance('agent_b', 'USD', 1, 1));
      await publish('readiness', {
        agent_id: 'agent_a', setup_status: 'in_progress', missing_fields: ['bank_account', 'tax_id'],
        thresholds: [{ currency: 'USD', minimum_payout_micros: 100_000_000 }, { currency: 'EUR', minimum_payout_micros: 90_000_000 }],
        blocked_reason: 'recipient setup incomplete', updated_at: '2026-11-20T08:00:00Z', version: 4,
      });
      await caughtUp();
    });

    const ids = (page: PayoutPage<PayoutStatement>) => page.items.map((s) => s.statement_id);
    const idOf = (agent: string, n: number) => `st_${agent}_${String(n).padStart(2, '0')}`;

    it('balance: every currency of the caller, the four buckets as integer micros', async () => {
      const reply = await result<PayoutBalancesReply>(RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_a' });
      expect(reply.balances.map((b) => b.currency)).toEqual(['GBP', 'USD']);
      expect(reply.balances[1]).toEqual({
        agent_id: 'agent_a', currency: 'USD', pending_micros: 5_000_000, available_micros: 5_000_001, locked_micros: 5_000_002,
        paid_out_micros: 5_000_003, updated_at: '2026-11-01T00:00:00.000Z',
      });
      expect(await result(RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_nobody' })).toEqual({ balances: [] });
    });

    it('readiness: the stored record, or not_started before any readiness event', async () => {
      expect(await result(RpcSubjects.payoutsReadinessGet, { agent_id: 'agent_a' })).toEqual({
        agent_id: 'agent_a', setup_status: 'in_progress', missing_fields: ['bank_account', 'tax_id'],
        thresholds: [{ currency: 'USD', minimum_payout_micros: 100_000_000 }, { currency: 'EUR', minimum_payout_micros: 90_000_000 }],
        blocked_reason: 'recipient setup incomplete', updated_at: '2026-11-20T08:00:00.000Z',
      });
      expect(await result(RpcSubjects.payoutsReadinessGet, { agent_id: 'agent_b' })).toEqual({
        agent_id: 'agent_b', setup_status: 'not_started', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: null,
      });
    });

    it('overview: balances, readiness, latest statement and recent statements', async () => {
      const overview = await result<PayoutOverviewReply>(RpcSubjects.payoutsOverviewGet, { agent_id: 'agent_a' });
      expect(Object.keys(overview).sort()).toEqual(['balances', 'latest_statement', 'readiness', 'recent_statements']);
      expect(overview.balances).toHaveLength(2);
      expect(overview.readiness.setup_status).toBe('in_progress');
      expect(overview.latest_statement?.statement_id).toBe(idOf('agent_a', 24));
      expect(overview.recent_statements.map((s) => s.statement_id)).toEqual([24, 23, 22, 21, 20].map((n) => idOf('agent_a', n)));
      const empty = await result<PayoutOverviewReply>(RpcSubjects.payoutsOverviewGet, { agent_id: 'agent_nobody' });
      expect(empty).toEqual({
        balances: [],
        readiness: { agent_id: 'agent_nobody', setup_status: 'not_started', missing_fields: [], thresholds: [], blocked_reason: null, updated_at: null },
        latest_statement: null,
        recent_statements: [],
      });
    });

    it('statements: newest period first, defaults, pages, last partial page, beyond the end, empty', async () => {
      const first = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a' });
      expect({ page: first.page, page_size: first.page_size, total: first.total }).toEqual({ page: 1, page_size: 20, total: 25 });
      expect(ids(first)).toEqual(Array.from({ length: 20 }, (_, i) => idOf('agent_a', 24 - i)));

      const last = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 3, page_size: 10 });
      expect({ page: last.page, page_size: last.page_size, total: last.total }).toEqual({ page: 3, page_size: 10, total: 25 });
      expect(ids(last)).toEqual([4, 3, 2, 1, 0].map((n) => idOf('agent_a', n)));

      // query-string spelling of the integers, as the gateway may pass them through
      const second = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: '2', page_size: '10' });
      expect(ids(second)).toEqual(Array.from({ length: 10 }, (_, i) => idOf('agent_a', 14 - i)));

      const beyond = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 4, page_size: 10 });
      expect(beyond).toEqual({ items: [], page: 4, page_size: 10, total: 25 });
      const far = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 10_000, page_size: 100 });
      expect(far).toEqual({ items: [], page: 10_000, page_size: 100, total: 25 });

      const all = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: 100 });
      expect(all.items).toHaveLength(25);
      expect(all.items.every((s) => s.agent_id === 'agent_a')).toBe(true);

      expect(await result(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_nobody' })).toEqual({ items: [], page: 1, page_size: 20, total: 0 });
      const one = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: 1 });
      expect({ n: one.items.length, total: one.total }).toEqual({ n: 1, total: 25 });
    });

    it('statements: status filter', async () => {
      for (const status of STATUSES) {
        const page = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', status, page_size: 100 });
        const expected = Array.from({ length: 25 }, (_, n) => n).filter((n) => STATUSES[n % 4] === status).reverse();
        expect(page.total).toBe(expected.length);
        expect(ids(page)).toEqual(expected.map((n) => idOf('agent_a', n)));
        expect(page.items.every((s) => s.status === status)).toBe(true);
      }
      const paid = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', status: 'PAID', page: 2, page_size: 4 });
      expect({ ids: ids(paid), total: paid.total }).toEqual({ ids: [7, 3].map((n) => idOf('agent_a', n)), total: 6 });
    });

    it('statement by id: with its transfer; another platform\'s or an unknown id is not_found', async () => {
      const paid = await result<PayoutStatement>(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_a', statement_id: idOf('agent_a', 3) });
      const { version: _v, ...expected } = statement('agent_a', 3);
      expect(paid).toEqual(expected);
      expect(paid.transfer).toMatchObject({ target_currency: 'EUR', amount_received_micros: 8_200_000, fee_micros: 150_000, exchange_rate: '0.9277' });
      const failed = await result<PayoutStatement>(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_a', statement_id: idOf('agent_a', 2) });
      expect(failed).toMatchObject({ status: 'FAILED', failure: { code: 'account_closed' }, transfer: null });

      const foreign = await wire(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_a', statement_id: idOf('agent_b', 1) });
      const unknown = await wire(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_a', statement_id: 'st_nope' });
      expect(foreign).toEqual({ ok: false, error: { code: 'not_found', message: 'statement not found' } });
      expect(unknown).toEqual(foreign);
      expect((await wire(RpcSubjects.payoutsStatementGet, { agent_id: 'agent_b', statement_id: idOf('agent_b', 1) })).ok).toBe(true);
    });

    it('history: locked, blocked, failed and paid statements, paginated', async () => {
      const page = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsHistoryList, { agent_id: 'agent_a', page: 2, page_size: 20 });
      expect({ page: page.page, page_size: page.page_size, total: page.total }).toEqual({ page: 2, page_size: 20, total: 25 });
      expect(ids(page)).toEqual([4, 3, 2, 1, 0].map((n) => idOf('agent_a', n)));
      expect(await result(RpcSubjects.payoutsHistoryList, { agent_id: 'agent_nobody' })).toEqual({ items: [], page: 1, page_size: 20, total: 0 });
      const b = await result<PayoutPage<PayoutStatement>>(RpcSubjects.payoutsHistoryList, { agent_id: 'agent_b' });
      expect(ids(b)).toEqual([2, 1, 0].map((n) => idOf('agent_b', n)));
    });

    it.each([
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 0 }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: -1 }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 1.5 }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 10_001 }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: 'abc' }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page: '1.0' }, /page/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: 0 }, /page_size/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: 101 }, /page_size/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: '101' }, /page_size/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', page_size: 2.5 }, /page_size/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', status: 'OPEN' }, /status/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', status: 'paid' }, /status/],
      [RpcSubjects.payoutsStatementsList, { agent_id: 'agent_a', sort: 'asc' }, /sort/],
      [RpcSubjects.payoutsHistoryList, { agent_id: 'agent_a', status: 'PAID' }, /status/],
      [RpcSubjects.payoutsHistoryList, { agent_id: 'agent_a', page_size: 1000 }, /page_size/],
      [RpcSubjects.payoutsStatementsList, { page: 1 }, /agent_id/],
      [RpcSubjects.payoutsBalanceGet, {}, /agent_id/],
      [RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_a', currency: 'USD' }, /currency/],
      [RpcSubjects.payoutsOverviewGet, { agent_id: '' }, /agent_id/],
      [RpcSubjects.payoutsReadinessGet, { agent_id: 42 }, /agent_id/],
      [RpcSubjects.payoutsStatementGet, { agent_id: 'agent_a' }, /statement_id/],
    ])('%s %j → invalid_request', async (subject, body, mentions) => {
      const reply = await wire(subject, body);
      expect(reply.ok).toBe(false);
      if (!reply.ok) {
        expect(reply.error.code).toBe('invalid_request');
        expect(reply.error.message).toMatch(mentions);
      }
    });
  });
});
