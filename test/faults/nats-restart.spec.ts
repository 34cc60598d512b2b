import { waitFor } from '../support/index.js';
import { consumerState, waitCaughtUp } from './support/consumer.js';
import { report } from './support/figures.js';
import { compareWithModel, expectAgreesWithModel } from './support/model-comparison.js';
import { allScopes, registerScopes, reportsPublishedAfter } from './support/reports.js';
import { useFaultServers } from './support/servers.js';
import { startService } from './support/services.js';
import { buildWorkload } from './support/workload.js';
import { Streams } from '#libs/contracts';
import type { ModelEvent } from '../support/reference-model.js';

/**
 * Fault 4: nats-server (JetStream, file storage) is killed with SIGKILL while events are being
 * published and ingested, and started again on the same port and store directory. The producer
 * retries unacknowledged publishes with the same Nats-Msg-Id; the service reconnects by itself
 * (same process). Nothing JetStream acknowledged is lost and every report equals the model.
 */
const EVENTS = 60_000;
const AGENTS = ['agent_n1', 'agent_n2', 'agent_n3'];
const SEED = Number(process.env.FAULTS_SEED ?? 7004);

const stack = useFaultServers();
/** Everything acknowledged across this file's tests: the reports cover it all. */
const ackedSoFar: ModelEvent[] = [];

describe('fault: NATS restarted mid-ingest', () => {
  it('loses nothing acknowledged; the service reconnects on its own; totals exact', async () => {
    const { nats, producer } = stack;
    const service = await startService('reporting-projection', { ...stack.env, REPORTING_PUBLISH_INTERVAL_MS: 1000, INGEST_BATCH_SIZE: 500 });
    stack.services.push(service);
    const workload = buildWorkload({ seed: SEED, targetEvents: EVENTS, agents: AGENTS });
    const scopes = allScopes(AGENTS);
    await registerScopes(producer.connection, scopes);

    let acked = 0;
    const publishing = producer.publish(workload, { concurrency: 256, onAck: (count) => (acked = count) });
    const atKill = await waitFor(
      async () => {
        const state = await consumerState(producer.manager);
        return state.ackFloor > EVENTS / 4 && state.ackPending > 0 ? { ...state, ackedByProducer: acked } : undefined;
      },
      { timeoutMs: 120000, intervalMs: 20, what: 'ingestion under way' },
    );
    await nats.kill('SIGKILL');
    const killedAt = Date.now();
    await new Promise((r) => setTimeout(r, 2000));
    await nats.start();
    const downMs = Date.now() - killedAt;

    const published = await publishing;
    ackedSoFar.push(...published.acked);
    const caughtUp = await waitCaughtUp(producer.manager, { expectStored: published.stored });
    const stream = await producer.manager.streams.info(Streams.events);
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    const comparison = compareWithModel(reports, published.acked);
    report('NATS killed and restarted mid-ingest', {
      events: workload.messages.length,
      stored: published.stored,
      inStream: stream.state.messages,
      distinctMessageIds: new Set(workload.messages.map((m) => m.msgId)).size,
      duplicatesDropped: published.duplicates,
      publishRetries: published.retries,
      killedAt: atKill,
      downMs,
      catchUpAfterRestartMs: caughtUp.getTime() - killedAt - downMs,
      mismatches: comparison.mismatches.length,
      totals: comparison.totals,
    });

    // Every message id is in the stream exactly once: a publish whose PubAck was lost in the
    // crash was stored, and its retry was recognised as a duplicate.
    expect(stream.state.messages).toBe(new Set(workload.messages.map((m) => m.msgId)).size);
    expect(published.retries).toBeGreaterThan(0);
    // The same process, never restarted, lost its connection and came back by itself.
    expect(service.running()).toBe(true);
    expect(service.output()).toMatch(/NATS (disconnect|reconnect)/);
    await expectAgreesWithModel(stack, comparison, published.acked, 5_000);
    expect((await fetch(`${service.url}/health/ready`)).status).toBe(200);
  }, 300_000);

  it('NATS freezes (SIGSTOP) while a fetch is open: the messages it brought are applied, not left for ack_wait', async () => {
    // Fewer events than a batch: the consumer's fetch receives them, then waits for more until
    // it expires. Frozen, the server sends no heartbeats, so the client ends the fetch with
    // "heartbeats missed"; the messages it received must still be applied and acked, not held
    // unacked until the consumer's ack_wait (60 s) brings them back.
    const { nats, producer, services: [service] } = stack;
    const workload = buildWorkload({ seed: SEED + 1, targetEvents: 300, agents: AGENTS });
    const published = await producer.publish(workload, { concurrency: 32 });
    ackedSoFar.push(...published.acked);
    await nats.freeze();
    await new Promise((r) => setTimeout(r, 3000));
    nats.signal('SIGCONT');
    const thawedAt = Date.now();
    // Well under the consumer's ack_wait: nothing waited for a redelivery.
    const caughtUp = await waitCaughtUp(producer.manager, { timeoutMs: 30000 });
    const scopes = allScopes(AGENTS);
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    const comparison = compareWithModel(reports, ackedSoFar);
    report('NATS frozen for 3 s with a fetch open', {
      events: published.stored,
      caughtUpAfterThawMs: caughtUp.getTime() - thawedAt,
      fetchEndedEarly: (service.output().match(/fetch ended early/g) ?? []).length,
      mismatches: comparison.mismatches.length,
    });
    await expectAgreesWithModel(stack, comparison, ackedSoFar);
    expect(service.running()).toBe(true);
  }, 120_000);
});
