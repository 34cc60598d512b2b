import { waitFor } from '../support/index.js';
import { consumerState, prepareProjectionConsumer, waitCaughtUp } from './support/consumer.js';
import { report, stopwatch } from './support/figures.js';
import { compareWithModel, expectAgreesWithModel } from './support/model-comparison.js';
import { allScopes, registerScopes, reportsPublishedAfter } from './support/reports.js';
import { useFaultServers } from './support/servers.js';
import { startService } from './support/services.js';
import { buildWorkload } from './support/workload.js';

/**
 * Fault 1: reporting-projection is killed with SIGKILL while it ingests 200,000 events (a batch
 * applied, the next one fetched, neither acked), and started again. Every report, for every
 * platform, both traffics and every time range, must equal the reference model of the events
 * JetStream acknowledged: the killed process's uncommitted batches come back after ack_wait
 * and are applied once, the committed-but-unacked ones are applied again without effect.
 */
const EVENTS = 200_000;
const AGENTS = ['agent_k1', 'agent_k2', 'agent_k3', 'agent_k4'];
const SEED = Number(process.env.FAULTS_SEED ?? 7001);

const stack = useFaultServers();

describe('fault: kill -9 of reporting-projection mid-ingest', () => {
  it('after a restart, every report equals the reference model of the acknowledged events', async () => {
    const { nats, producer, services } = stack;
    const env = { ...stack.env, REPORTING_PUBLISH_INTERVAL_MS: 1000 };
    const time = stopwatch();
    const workload = buildWorkload({ seed: SEED, targetEvents: EVENTS, agents: AGENTS });
    const scopes = allScopes(AGENTS);
    await prepareProjectionConsumer(nats.url);
    time.lap('setup');

    const first = await startService('reporting-projection', env, { label: 'projection-1' });
    services.push(first);
    await registerScopes(producer.connection, scopes);

    const publishing = producer.publish(workload, { concurrency: 256 });
    // Mid-ingest: a good part applied, batches in flight (delivered, not acked), more stored behind.
    const atKill = await waitFor(
      async () => {
        const state = await consumerState(producer.manager);
        return state.ackFloor > EVENTS / 4 && state.ackPending > 0 ? state : undefined;
      },
      { timeoutMs: 240000, intervalMs: 20, what: 'ingestion under way' },
    );
    time.lap('ingestUntilKill');
    await first.kill('SIGKILL');
    const afterKill = await consumerState(producer.manager);

    const second = await startService('reporting-projection', env, { label: 'projection-2' });
    services.push(second);
    time.lap('restart');
    const published = await publishing;
    time.lap('restOfPublishing');
    expect(published.acked).toHaveLength(workload.messages.length);
    // The kill landed in the middle: events stored and not applied, and a batch held unacked.
    expect(afterKill.ackFloor).toBeLessThan(published.stored);
    expect(afterKill.ackPending).toBeGreaterThan(0);

    const caughtUp = await waitCaughtUp(producer.manager, { expectStored: published.stored });
    time.lap('catchUp');
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    time.lap('publication');
    const comparison = compareWithModel(reports, published.acked);
    time.lap('compare');
    report('kill -9 of reporting-projection', {
      events: workload.messages.length,
      stored: published.stored,
      duplicatesDropped: published.duplicates,
      killedAt: atKill,
      heldByTheKilledProcess: afterKill.ackPending,
      scopesCompared: comparison.scopes,
      mismatches: comparison.mismatches.length,
      totals: comparison.totals,
      ms: time.laps,
    });
    expect(comparison.scopes).toBe(AGENTS.length * 2 * 6);
    await expectAgreesWithModel(stack, comparison, published.acked, 10_000);
    expect(second.running()).toBe(true);
  }, 600_000);
});
