import { waitFor } from '../support/index.js';
import { consumerState, waitCaughtUp } from './support/consumer.js';
import { report } from './support/figures.js';
import { compareWithModel, expectAgreesWithModel } from './support/model-comparison.js';
import { allScopes, registerScopes, reportsPublishedAfter } from './support/reports.js';
import { useFaultServers } from './support/servers.js';
import { metricValue, startService } from './support/services.js';
import { buildWorkload } from './support/workload.js';

/**
 * Fault 3: PostgreSQL stops with `pg_ctl -m immediate` (no checkpoint: crash recovery at the
 * next start) while reporting-projection ingests, and comes back on the same port a few seconds
 * later. The service is not restarted: its consumers retry the failed batches (never
 * dead-lettering them) and resume by themselves, and every report equals the reference model.
 */
const EVENTS = 60_000;
const AGENTS = ['agent_p1', 'agent_p2', 'agent_p3'];
const SEED = Number(process.env.FAULTS_SEED ?? 7003);

const stack = useFaultServers();

describe('fault: PostgreSQL restarted mid-ingest', () => {
  it('loses nothing acked; the consumers resume on their own; totals exact', async () => {
    const { postgres, producer } = stack;
    const service = await startService('reporting-projection', { ...stack.env, REPORTING_PUBLISH_INTERVAL_MS: 1000, INGEST_BATCH_SIZE: 500 });
    stack.services.push(service);
    const workload = buildWorkload({ seed: SEED, targetEvents: EVENTS, agents: AGENTS });
    const scopes = allScopes(AGENTS);
    await registerScopes(producer.connection, scopes);

    const publishing = producer.publish(workload, { concurrency: 256 });
    const atStop = await waitFor(
      async () => {
        const state = await consumerState(producer.manager);
        return state.ackFloor > EVENTS / 4 && state.ackPending > 0 ? state : undefined;
      },
      { timeoutMs: 120000, intervalMs: 20, what: 'ingestion under way' },
    );
    await postgres.stop({ mode: 'immediate' });
    const stoppedAt = Date.now();
    // While it is down: the service stays up, reports it not ready, and applies nothing.
    const readiness = await waitFor(async () => {
      const response = await fetch(`${service.url}/health/ready`);
      return response.status === 503 ? response.status : undefined;
    }, { timeoutMs: 10000, what: 'readiness to report PostgreSQL down' });
    const floorWhileDown = (await consumerState(producer.manager)).ackFloor;
    await new Promise((r) => setTimeout(r, 3000));
    const floorLaterWhileDown = (await consumerState(producer.manager)).ackFloor;
    await postgres.start();
    const restartedAt = Date.now();
    const downMs = restartedAt - stoppedAt;

    const published = await publishing;
    const caughtUp = await waitCaughtUp(producer.manager, { expectStored: published.stored });
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    const comparison = compareWithModel(reports, published.acked);
    const metrics = await service.metrics();
    const retried = metricValue(metrics, 'weave_consumer_messages_total', { durable: 'reporting-projection', outcome: 'retry' });
    report('PostgreSQL restarted (immediate) mid-ingest', {
      events: workload.messages.length,
      stored: published.stored,
      stoppedAt: atStop,
      downMs,
      catchUpAfterRestartMs: caughtUp.getTime() - restartedAt,
      retriedMessages: retried,
      mismatches: comparison.mismatches.length,
      totals: comparison.totals,
    });

    expect(readiness).toBe(503);
    expect(floorLaterWhileDown).toBe(floorWhileDown);
    expect(floorWhileDown).toBeLessThan(published.stored);
    // The same process, never restarted, felt the outage and retried through it.
    expect(service.running()).toBe(true);
    expect(retried).toBeGreaterThan(0);
    // ... without racing through the backlog meanwhile (it pauses while the database is down,
    // instead of nak'ing every stored message over and over).
    expect(retried).toBeLessThan(published.stored / 4);
    expect(service.output()).toMatch(/transient error; retrying later/);
    await expectAgreesWithModel(stack, comparison, published.acked, 5_000);
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
  }, 300_000);
});
