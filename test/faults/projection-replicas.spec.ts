import { readFile, readdir, readlink } from 'node:fs/promises';
import pg from 'pg';
import { waitFor } from '../support/index.js';
import { waitCaughtUp } from './support/consumer.js';
import { report } from './support/figures.js';
import { compareWithModel, expectAgreesWithModel } from './support/model-comparison.js';
import { allScopes, registerScopes, reportsPublishedAfter, requestReport } from './support/reports.js';
import { useFaultServers } from './support/servers.js';
import { concurrencyTrouble, metricValue, startService } from './support/services.js';
import { buildWorkload, concatenate, contentionWorkload } from './support/workload.js';

/**
 * Faults 2 and 7: two reporting-projection replicas share the durable consumer and the
 * publication. (2) Consuming at once, with small batches that touch the same recommendation
 * and rollup rows, they give exactly the reference totals, both do work, and neither they nor
 * PostgreSQL ever report a deadlock or a serialization failure. (7) The replica seen holding
 * the publication lock is SIGKILLed: the other one publishes within two intervals.
 */
const EVENTS = 50_000;
const HOT_EVENTS = 30_000;
const AGENTS = ['agent_r1', 'agent_r2', 'agent_r3'];
const INTERVAL_MS = 3000;
const SEED = Number(process.env.FAULTS_SEED ?? 7002);
const PUBLICATION_LOCK = 'reporting:publication';

const stack = useFaultServers();
const replicas = stack.services;

beforeAll(async () => {
  const env = {
    ...stack.env,
    REPORTING_PUBLISH_INTERVAL_MS: INTERVAL_MS,
    // Small batches, so that both replicas hold batches at once and meet on the same rows.
    INGEST_BATCH_SIZE: 100,
  };
  // Started together: they also race for the migrations and the durable consumer.
  replicas.push(...(await Promise.all([startService('reporting-projection', env, { label: 'replica-a' }), startService('reporting-projection', env, { label: 'replica-b' })])));
});

describe('fault: two reporting-projection replicas', () => {
  it('consume at once: exact totals, both acked work, no deadlock or serialization error anywhere', async () => {
    const { postgres, producer } = stack;
    // The general workload, then one that makes the replicas' transactions meet on
    // recommendations being created at that moment.
    const workload = concatenate(
      buildWorkload({ seed: SEED, targetEvents: EVENTS, agents: AGENTS }),
      contentionWorkload({ seed: SEED, events: HOT_EVENTS, agents: AGENTS }),
    );
    const scopes = allScopes(AGENTS);
    await registerScopes(producer.connection, scopes);

    const published = await producer.publish(workload, { concurrency: 256 });
    const caughtUp = await waitCaughtUp(producer.manager, { expectStored: published.stored });
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    const comparison = compareWithModel(reports, published.acked);

    const applied = await Promise.all(
      replicas.map(async (r) => metricValue(await r.metrics(), 'weave_consumer_messages_total', { durable: 'reporting-projection', outcome: 'applied' })),
    );
    const retried = await Promise.all(
      replicas.map(async (r) => metricValue(await r.metrics(), 'weave_consumer_messages_total', { durable: 'reporting-projection', outcome: 'retry' })),
    );
    const trouble = replicas.flatMap((r) => concurrencyTrouble(r.output()).map((line) => `${r.name}: ${line}`));
    const serverLog = (await postgres.log()).split('\n');
    const serverTrouble = serverLog.filter((line) => /deadlock|could not serialize/i.test(line));
    // On failure, show PostgreSQL's own account (DETAIL: who waited for whom, STATEMENT).
    for (const [i, line] of serverLog.entries()) if (/deadlock detected/.test(line)) process.stdout.write(`${serverLog.slice(i, i + 12).join('\n')}\n`);
    report('two replicas consuming at once', {
      events: workload.messages.length,
      stored: published.stored,
      appliedPerReplica: applied,
      retriedPerReplica: retried,
      mismatches: comparison.mismatches.length,
      deadlockOrSerializationLines: trouble.length + serverTrouble.length,
      totals: comparison.totals,
    });

    await expectAgreesWithModel(stack, comparison, published.acked, 5_000);
    expect(applied[0]).toBeGreaterThan(0);
    expect(applied[1]).toBeGreaterThan(0);
    expect(applied[0] + applied[1]).toBeGreaterThanOrEqual(published.stored);
    expect(trouble).toEqual([]);
    expect(serverTrouble).toEqual([]);
    expect(replicas.every((r) => r.running())).toBe(true);
  }, 300_000);

  it('the publication leader dies (SIGKILL while holding the lock): the other replica publishes within two intervals', async () => {
    const { producer } = stack;
    const admin = new pg.Client({ connectionString: stack.databaseUrl });
    await admin.connect();
    try {
      // Many prepared scopes, so that a cycle holds the lock long enough to be caught at it.
      await admin.query(
        `INSERT INTO reporting.report_scope (agent_id, traffic, time_range)
         SELECT 'agent_many_' || i, t, r FROM generate_series(1, 200) i, unnest(ARRAY['live', 'test']) t,
           unnest(ARRAY['today', '1d', '7d', '30d', '90d', 'all']) r
         ON CONFLICT DO NOTHING`,
      );
      const lockHolderPort = async (): Promise<number | undefined> => {
        const { rows } = await admin.query(
          `SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
           WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
             AND l.objid::bigint = (hashtext($1)::bigint & 4294967295)`,
          [PUBLICATION_LOCK],
        );
        return rows[0]?.client_port ?? undefined;
      };
      const holder = await waitFor(
        async () => {
          const port = await lockHolderPort();
          if (port === undefined) return undefined;
          const pid = await pidOwningLocalPort(port, replicas.map((r) => r.pid));
          return pid === undefined ? undefined : replicas.find((r) => r.pid === pid);
        },
        { timeoutMs: 60000, intervalMs: 10, what: 'a replica holding the publication lock' },
      );
      await holder.kill('SIGKILL');
      const killedAt = Date.now();
      const survivor = replicas.find((r) => r !== holder)!;

      // The survivor alone answers report requests now; wait for a report it published after the kill.
      const scope = allScopes(AGENTS)[0];
      const next = await waitFor(
        async () => {
          const reply = await requestReport(producer.connection, scope);
          return 'updated_at' in reply && Date.parse(reply.updated_at) > killedAt ? reply : undefined;
        },
        { timeoutMs: 2 * INTERVAL_MS + 30000, intervalMs: 50, what: 'a publication by the surviving replica' },
      );
      const seenAfterMs = Date.now() - killedAt;
      const startedAfterMs = Date.parse(next.updated_at) - killedAt;
      const [{ last_completed_at }] = (await admin.query(`SELECT last_completed_at FROM reporting.publication_state`)).rows;
      const publishedAfter = metricValue(await survivor.metrics(), 'weave_publication_seconds_count', { outcome: 'published' });
      report('publication leader killed', {
        killed: holder.name,
        survivor: survivor.name,
        intervalMs: INTERVAL_MS,
        survivorCycleStartedAfterMs: startedAfterMs,
        reportSeenAfterMs: seenAfterMs,
        survivorPublications: publishedAfter,
        cycleSeconds: metricValue(await survivor.metrics(), 'weave_publication_seconds_sum', { outcome: 'published' }) / publishedAfter,
      });
      // The survivor's cycle started within two intervals of the kill, and completed soon after.
      expect(startedAfterMs).toBeLessThanOrEqual(2 * INTERVAL_MS);
      expect(seenAfterMs).toBeLessThanOrEqual(2 * INTERVAL_MS + 10000);
      expect(last_completed_at.getTime()).toBeGreaterThan(killedAt);
      expect(publishedAfter).toBeGreaterThan(0);
      expect(survivor.running()).toBe(true);
      expect(holder.running()).toBe(false);
    } finally {
      await admin.end();
    }
  }, 120_000);
});

/** Which of `pids` has a TCP socket whose local port is `port` (/proc/net/tcp, then /proc/<pid>/fd). */
async function pidOwningLocalPort(port: number, pids: number[]): Promise<number | undefined> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = parseInt(fields[1].split(':')[1], 16);
      if (localPort === port) inodes.add(fields[9]);
    }
  }
  for (const pid of pids) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode && inodes.has(inode)) return pid;
    }
  }
  return undefined;
}
