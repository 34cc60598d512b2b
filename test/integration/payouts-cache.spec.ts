import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, type PayoutBalancesReply } from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import {
  connectProducer,
  newTestDatabase,
  payoutStatementEvent,
  prepareStreams,
  startNats,
  startPayoutsRead,
  waitFor,
  type Producer,
  type TestDatabase,
  type TestNats,
} from '../support/index.js';

/**
 * Two payouts-read replicas share the requests (queue group) and cache replies per platform.
 * A change applied by either replica is visible through both right away: the replica that
 * commits announces the platform on payouts.v1.changed and every replica drops its replies.
 */
let nats: TestNats;
let db: TestDatabase;
let producer: Producer;
let rpc: ClientProxy;
const replicas: Awaited<ReturnType<typeof startPayoutsRead>>[] = [];

beforeAll(async () => {
  nats = await startNats();
  db = newTestDatabase();
  await prepareStreams(nats.url);
  producer = await connectProducer(nats.url);
  rpc = new NatsRpcClient({ connection: producer.connection, timeoutMs: 5000 });
  // A long TTL: only the announcement can make the replicas see a change in time.
  for (let i = 0; i < 2; i++) replicas.push(await startPayoutsRead({ natsUrl: nats.url, databaseUrl: db.url, PAYOUTS_CACHE_TTL_MS: 60000 }));
});

afterAll(async () => {
  for (const replica of replicas) await replica.close();
  await producer?.close();
  await nats?.stop();
  await db?.drop();
});

const balance = (version: number, available: number) => ({
  agent_id: 'agent_cache',
  currency: 'USD',
  pending_micros: 0,
  available_micros: available,
  locked_micros: 0,
  paid_out_micros: 0,
  updated_at: new Date(Date.UTC(2026, 10, 1, 0, version)).toISOString(),
  version,
});

async function available(): Promise<number | undefined> {
  const reply = await firstValueFrom(rpc.send<PayoutBalancesReply>(RpcSubjects.payoutsBalanceGet, { agent_id: 'agent_cache' }));
  return reply.balances[0]?.available_micros;
}

it('serves a change through every replica once it is applied, despite cached replies', async () => {
  await producer.publish({ subject: 'events.payouts.balance', id: 'bal_1', payload: balance(1, 100) });
  await waitFor(async () => (await available()) === 100, { what: 'first version' });
  // Fill both replicas' caches (requests alternate between queue members).
  for (let i = 0; i < 20; i++) expect(await available()).toBe(100);

  await producer.publish({ subject: 'events.payouts.balance', id: 'bal_2', payload: balance(2, 250) });
  await waitFor(async () => (await available()) === 250, { what: 'second version' });
  const seen = new Set<number | undefined>();
  for (let i = 0; i < 20; i++) seen.add(await available());
  expect([...seen]).toEqual([250]);
});

/** Replies payouts-read answered from the database so far (both replicas run in this process: one registry). */
async function fromDatabase(): Promise<number> {
  const text = await (await fetch(`${replicas[0].url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('weave_payout_reply_cache_total') && l.includes('source="database"'));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

it('answers pages past the last one but never caches them; the pages with statements are cached', async () => {
  const ask = (subject: string, payload: object) => firstValueFrom(rpc.send<{ items: unknown[]; page: number; total: number }>(subject, payload));
  for (const n of [1, 2, 3]) {
    await producer.publish({
      subject: 'events.payouts.statement',
      id: `st_paging_${n}`,
      payload: payoutStatementEvent('agent_paging', n),
    });
  }
  await waitFor(async () => (await ask(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_paging' })).total === 3, { what: 'statements applied' });

  // The last page with items: loaded once per replica at most, then cached.
  let before = await fromDatabase();
  for (let i = 0; i < 6; i++) expect((await ask(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_paging', page: 2, page_size: 2 })).items).toHaveLength(1);
  expect((await fromDatabase()) - before).toBeLessThanOrEqual(2);

  // Past the last page (statements and history): answered every time, from the database every time.
  for (const subject of [RpcSubjects.payoutsStatementsList, RpcSubjects.payoutsHistoryList]) {
    before = await fromDatabase();
    for (let i = 0; i < 6; i++) expect(await ask(subject, { agent_id: 'agent_paging', page: 3, page_size: 2 })).toEqual({ items: [], page: 3, page_size: 2, total: 3 });
    expect((await fromDatabase()) - before).toBe(6);
  }
  // An empty first page (a platform without statements) is cached like any page.
  before = await fromDatabase();
  for (let i = 0; i < 6; i++) expect((await ask(RpcSubjects.payoutsStatementsList, { agent_id: 'agent_paging_none' })).total).toBe(0);
  expect((await fromDatabase()) - before).toBeLessThanOrEqual(2);
});
