import pg from 'pg';
import { waitFor } from '../support/index.js';
import { consumerState, waitCaughtUp } from './support/consumer.js';
import { deadLetters } from './support/dead-letters.js';
import { report } from './support/figures.js';
import { compareWithModel } from './support/model-comparison.js';
import { allScopes, registerScopes, reportsPublishedAfter } from './support/reports.js';
import { useFaultServers } from './support/servers.js';
import { startService } from './support/services.js';
import { buildWorkload } from './support/workload.js';

/**
 * Fault 8: poison messages at the head of the stream, with valid events behind them.
 * - An invalid payload (truncated JSON) is dead-lettered on its first delivery.
 * - A valid event whose application always fails: the test installs a trigger in the service's
 *   database that raises for one recommendation id, so the handler throws on every delivery (a
 *   non-transient error, as a bug or an unforeseen data state would). It is retried with
 *   backoff and dead-lettered on delivery INGEST_MAX_DELIVERIES, with the reason.
 * The events behind them are applied while the poison still waits for its next delivery (it
 * never holds them back), and the reports equal the reference model of the valid events.
 */
// Seven deliveries: the poison then waits 0.5 + 1 + 2 + 4 + 8 + 16 s (each halved at worst by
// the jitter) before it is dead-lettered, room enough for the events behind it to be applied
// first on a loaded machine, where the batches it meets are each retried message by message.
const MAX_DELIVERIES = 7;
const AGENTS = ['agent_x1', 'agent_x2'];
const SEED = Number(process.env.FAULTS_SEED ?? 7008);

const stack = useFaultServers();

describe('fault: a poison message', () => {
  it('is dead-lettered after a bounded number of deliveries and never blocks the messages behind it', async () => {
    const { producer } = stack;
    const service = await startService('reporting-projection', { ...stack.env, REPORTING_PUBLISH_INTERVAL_MS: 1000, INGEST_BATCH_SIZE: 200, INGEST_MAX_DELIVERIES: MAX_DELIVERIES });
    stack.services.push(service);
    const admin = new pg.Client({ connectionString: stack.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`
        CREATE FUNCTION reporting.test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.recommendation_id = 'rec_poison' THEN RAISE EXCEPTION 'poisoned recommendation (installed by the fault test)'; END IF;
          RETURN NEW;
        END $$`);
      await admin.query(`CREATE TRIGGER test_poison BEFORE INSERT OR UPDATE ON reporting.recommendation FOR EACH ROW EXECUTE FUNCTION reporting.test_poison()`);
    } finally {
      await admin.end();
    }
    const scopes = allScopes(AGENTS);
    await registerScopes(producer.connection, scopes);

    const created = new Date(Date.now() - 10 * 60_000).toISOString();
    const poisons = await producer.publish({
        agents: AGENTS,
        messages: [
          {
            subject: 'events.recommendation.clicked',
            msgId: 'evt_poison',
            data: JSON.stringify({ event_id: 'evt_poison', recommendation_id: 'rec_poison', agent_id: AGENTS[0], traffic: 'live', recommendation_created_at: created, occurred_at: created }),
          },
          { subject: 'events.recommendation.shown', msgId: 'evt_truncated', data: '{"event_id":"evt_truncated","recommendation_id":"rec_' },
        ],
        modelOf: [],
      });
    expect(poisons.stored).toBe(2);
    const workload = buildWorkload({ seed: SEED, targetEvents: 3000, agents: AGENTS });
    const behind = await producer.publish(workload);

    // Everything behind the poison is applied and acked while the poison itself is still waiting
    // for a redelivery: one message unacked, and it is not in DEAD_LETTERS yet.
    const whileWaiting = await waitFor(
      async () => {
        const state = await consumerState(producer.manager);
        if (state.pending !== 0 || state.ackPending !== 1) return undefined;
        return { state, letters: await deadLetters(producer.connection, producer.manager) };
      },
      { timeoutMs: 60000, intervalMs: 50, what: 'the events behind the poison to be applied' },
    );
    expect(whileWaiting.letters.map((l) => l.subject)).toEqual(['deadletter.events.recommendation.shown']);

    // Then the poison is dead-lettered on its last delivery, with the reason.
    const caughtUp = await waitCaughtUp(producer.manager, { timeoutMs: 120000 });
    const letters = await deadLetters(producer.connection, producer.manager);
    const reports = await reportsPublishedAfter(producer.connection, scopes, caughtUp);
    const comparison = compareWithModel(reports, behind.acked);
    report('poison messages', {
      behind: behind.stored,
      appliedWhilePoisonWaited: whileWaiting.state,
      deadLetters: letters.map(({ subject, reason, deliveries, originalSequence }) => ({ subject, reason, deliveries, originalSequence })),
      mismatches: comparison.mismatches.length,
    });

    expect(letters).toHaveLength(2);
    const exhausted = letters.find((l) => l.subject === 'deadletter.events.recommendation.clicked')!;
    const invalid = letters.find((l) => l.subject === 'deadletter.events.recommendation.shown')!;
    expect(exhausted).toMatchObject({ subject: 'deadletter.events.recommendation.clicked', originalSequence: 1, deliveries: MAX_DELIVERIES });
    expect(exhausted.reason).toMatch(new RegExp(`^handler failed after ${MAX_DELIVERIES} deliveries: .*poisoned recommendation`));
    expect(JSON.parse(exhausted.data)).toMatchObject({ event_id: 'evt_poison' });
    expect(invalid).toMatchObject({ subject: 'deadletter.events.recommendation.shown', originalSequence: 2, deliveries: 1 });
    expect(invalid.reason).toMatch(/not valid UTF-8 JSON/);
    expect(comparison.mismatches).toEqual([]);
    expect(comparison.totals.exposures).toBeGreaterThan(100);
    expect(service.running()).toBe(true);
  }, 180_000);
});
