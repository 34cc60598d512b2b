import { connect, type NatsConnection } from '@nats-io/transport-node';
import type pg from 'pg';
import { BroadcastSubjects, RpcSubjects, type Report } from '#libs/contracts';
import { encodeIdentityChanged, type IdentityRepository } from '#libs/identity';
import { GatewayEnv } from '../../apps/gateway/src/config/gateway.env.js';
import { metricValue } from '../faults/support/services.js';
import { connectSql, identityOf, readyReport, seedPlatform, startGateway, useTestStack, waitFor, type TestGateway } from '../support/index.js';

/**
 * The identity version (migration 1795760000000) and the gateway's poll of it: the database moves
 * the version with every change of what the gateway caches (never with the batched key uses), and
 * a gateway with the default cache TTL (60 s) refuses a revoked key or a suspended platform
 * within a second although no `identity.v1.changed` broadcast is sent. A broadcast naming a
 * platform drops only that platform's entries; an unreadable version drops the cache at every
 * poll until it can be read again.
 */
const stack = useTestStack();
let gateway: TestGateway;
let identity: IdentityRepository;
let sql: pg.Client;
let bus: NatsConnection;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const report = (agentId: string, timeRange: string): Report => readyReport(agentId, timeRange);

const status = async (apiKey: string) => (await fetch(`${gateway.base}/agent/reporting`, { headers: { authorization: `Bearer ${apiKey}` } })).status;
const metric = async (name: string, labels: Record<string, string>) => metricValue(await (await fetch(`${gateway.base}/metrics`)).text(), name, labels);
const fromDatabase = () => metric('weave_identity_lookups_total', { source: 'database' });
const fromCache = () => metric('weave_identity_lookups_total', { source: 'cache' });
const drops = (cause: string) => metric('weave_identity_cache_drops_total', { cause });
const version = async () => BigInt(await identity.identityVersion());

async function announce(change: { agent_id?: string; key_id?: string }): Promise<void> {
  bus.publish(BroadcastSubjects.identityChanged, encodeIdentityChanged(change));
  await bus.flush();
}

beforeAll(async () => {
  gateway = await startGateway(stack, { oidc: false, extra: { PORT: '0', LOG_LEVEL: 'error' } });
  identity = await identityOf(stack);
  sql = await connectSql(stack);
  bus = await connect({ servers: stack.nats.url });
  bus.subscribe(RpcSubjects.reportGet, {
    callback: (_error, msg) => {
      const { agent_id, time_range } = JSON.parse(new TextDecoder().decode(msg.data)) as { agent_id: string; time_range: string };
      msg.respond(new TextEncoder().encode(JSON.stringify({ ok: true, result: report(agent_id, time_range) })));
    },
  });
  await bus.flush();
  stack.atEnd(() => bus.close());
});

describe('the identity version', () => {
  it('moves with every change the gateway caches, in the changing transaction, and not with key uses, names or updated_at', async () => {
    const v0 = await version();
    await identity.createPlatform('agent_version');
    const v1 = await version();
    expect(v1).toBeGreaterThan(v0);
    // Idempotent creation changes nothing; giving the platform an owner does.
    await identity.createPlatform('agent_version');
    expect(await version()).toBe(v1);
    await identity.createPlatform('agent_version', 'owner_version');
    const v2 = await version();
    expect(v2).toBeGreaterThan(v1);

    const key = await identity.createKey('agent_version', 'live');
    const v3 = await version();
    expect(v3).toBeGreaterThan(v2);

    // What KeyUsageService writes in batches, a key's name and a platform's updated_at alone: no move.
    await identity.recordKeyUsage([{ key_id: key.key_id, used_at: new Date(), last4: key.api_key.slice(-4) }]);
    const { rows } = await sql.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM identity.api_key WHERE key_id = $1', [key.key_id]);
    expect(rows[0].last_used_at).toBeInstanceOf(Date);
    await sql.query('UPDATE identity.api_key SET last4 = NULL WHERE key_id = $1', [key.key_id]);
    await identity.recordKeyUsage([{ key_id: key.key_id, used_at: new Date(Date.now() + 1000), last4: key.api_key.slice(-4) }]);
    await sql.query(`UPDATE identity.api_key SET name = 'renamed' WHERE key_id = $1`, [key.key_id]);
    await sql.query(`UPDATE identity.platform SET updated_at = now() WHERE agent_id = 'agent_version'`);
    expect(await version()).toBe(v3);

    // Suspension, reactivation, revocation: each moves it; repeating one (no change) does not.
    await identity.setStatus('agent_version', 'suspended');
    const v4 = await version();
    expect(v4).toBeGreaterThan(v3);
    await identity.setStatus('agent_version', 'suspended');
    expect(await version()).toBe(v4);
    await identity.setStatus('agent_version', 'active');
    const v5 = await version();
    expect(v5).toBeGreaterThan(v4);
    await identity.revokeKey(key.key_id);
    const v6 = await version();
    expect(v6).toBeGreaterThan(v5);
    await identity.revokeKey(key.key_id);
    expect(await version()).toBe(v6);

    // A change rolled back leaves no trace; a deleted key moves it.
    await sql.query('BEGIN');
    await sql.query(`UPDATE identity.platform SET status = 'suspended' WHERE agent_id = 'agent_version'`);
    await sql.query('ROLLBACK');
    expect(await version()).toBe(v6);
    await sql.query('DELETE FROM identity.api_key WHERE key_id = $1', [key.key_id]);
    expect(await version()).toBeGreaterThan(v6);
  });
});

describe('a gateway with the default TTL, without any broadcast', () => {
  async function measure(apiKey: string, expected: number, change: () => Promise<unknown>): Promise<number> {
    // Let the poll see the version the seeding moved (it drops the cache once), then warm it.
    await sleep(600);
    expect(await status(apiKey)).toBe(200);
    // Served from the cache from now on: the TTL (60 s) is not what refuses the key below.
    const hits = await fromCache();
    expect(await status(apiKey)).toBe(200);
    expect(await fromCache()).toBeGreaterThan(hits);
    const started = Date.now();
    await change();
    await waitFor(async () => (await status(apiKey)) === expected, { timeoutMs: 3000, intervalMs: 10, what: `status ${expected}` });
    return Date.now() - started;
  }

  it('keeps identity lookups 60 s and polls the version every 250 ms', () => {
    expect(gateway.app.get(GatewayEnv)).toMatchObject({ IDENTITY_CACHE_TTL_MS: 60000, IDENTITY_VERSION_POLL_MS: 250 });
  });

  it('refuses a revoked key within 1 s', async () => {
    const { identity: repository } = await seedPlatform(stack, 'agent_poll_revoke');
    const key = await repository.createKey('agent_poll_revoke', 'live');
    expect(await measure(key.api_key, 401, () => repository.revokeKey(key.key_id))).toBeLessThan(1000);
  });

  it('refuses a suspended platform within 1 s (403)', async () => {
    const { key } = await seedPlatform(stack, 'agent_poll_suspend');
    expect(await measure(key, 403, () => identity.setStatus('agent_poll_suspend', 'suspended'))).toBeLessThan(1000);
  });
});

describe('broadcasts and failures', () => {
  it("drops only the named platform's entries on a broadcast naming it, everything on one naming none", async () => {
    const a = await seedPlatform(stack, 'agent_narrow_a');
    const b = await seedPlatform(stack, 'agent_narrow_b');
    // Wait for the poll to see the version these creations moved, then warm both keys.
    await sleep(600);
    expect([await status(a.key), await status(b.key)]).toEqual([200, 200]);
    let loads = await fromDatabase();
    expect([await status(a.key), await status(b.key)]).toEqual([200, 200]);
    expect(await fromDatabase()).toBe(loads);

    const narrow = await drops('identity_changed_platform');
    await announce({ agent_id: 'agent_narrow_b' });
    await waitFor(async () => (await drops('identity_changed_platform')) > narrow, { timeoutMs: 2000, intervalMs: 10, what: 'the broadcast' });
    expect([await status(a.key), await status(b.key)]).toEqual([200, 200]);
    // B's key was loaded again, A's came from the cache.
    expect(await fromDatabase()).toBe(loads + 1);
    loads = await fromDatabase();
    expect(await status(a.key)).toBe(200);
    expect(await fromDatabase()).toBe(loads);

    const whole = await drops('identity_changed');
    await announce({});
    await waitFor(async () => (await drops('identity_changed')) > whole, { timeoutMs: 2000, intervalMs: 10, what: 'the broadcast' });
    expect(await status(a.key)).toBe(200);
    expect(await fromDatabase()).toBeGreaterThan(loads);
  });

  it('drops the cache at every poll while the version cannot be read, and caches again once it can', async () => {
    const { key } = await seedPlatform(stack, 'agent_poll_failing');
    expect(await status(key)).toBe(200);
    const failed = await drops('version_poll_failed');
    const unknown = await drops('version_unknown');
    await sql.query('ALTER TABLE identity.identity_version RENAME TO identity_version_away');
    try {
      await waitFor(async () => (await drops('version_poll_failed')) > failed, { timeoutMs: 3000, intervalMs: 20, what: 'a failed poll' });
      // Keys are still checked (in the database): a poll in between drops each answer.
      const loads = await fromDatabase();
      for (let i = 0; i < 3; i++) {
        expect(await status(key)).toBe(200);
        await sleep(600);
      }
      expect(await fromDatabase()).toBeGreaterThanOrEqual(loads + 3);
    } finally {
      await sql.query('ALTER TABLE identity.identity_version_away RENAME TO identity_version');
    }
    await waitFor(async () => (await drops('version_unknown')) > unknown, { timeoutMs: 3000, intervalMs: 20, what: 'the version read again' });
    expect(await status(key)).toBe(200);
    const loads = await fromDatabase();
    expect(await status(key)).toBe(200);
    expect(await fromDatabase()).toBe(loads);
  });
});
