import { NatsRpcClient } from '#libs/nats';
import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import pg from 'pg';
import { createRecommendationsDataSource, importCatalog } from '#libs/catalog';
import { RpcSubjects, Streams, type RecommendResult } from '#libs/contracts';
import { initializeDatabase } from '#libs/database';
import { generateAd, questionAbout } from '../../bench/catalog-generator.js';
import { prng } from '../support/prng.js';
import { prepareStreams, storedEvents, waitFor } from '../support/index.js';
import { useFaultServers } from './support/servers.js';
import { startService } from './support/services.js';

/**
 * Fault: the recommendations service is killed with SIGKILL while it answers a stream of
 * questions (answers committed, their events not all published yet, requests in flight), and
 * started again. Every answer PostgreSQL recorded reaches EVENTS as exactly one `generated` event
 * per recommendation (the outbox relay of the new process publishes what the killed one left),
 * the outbox empties, and asking the recorded questions again answers the same recommendations.
 */
const QUESTIONS = 400;
const CONCURRENCY = 16;

const stack = useFaultServers();

describe('fault: kill -9 of recommendations mid-answers', () => {
  it('every recorded answer reaches EVENTS once, and the same question answers the same after a restart', async () => {
    const { env } = stack;
    await prepareStreams(stack.nats.url);
    const first = await startService('recommendations', env, { label: 'recommendations-1', ready: 'ready' });
    stack.services.push(first);
    const catalog = createRecommendationsDataSource(stack.databaseUrl, 2, 'fault-catalog');
    await initializeDatabase(catalog);
    await importCatalog(catalog, Array.from({ length: 1200 }, (_, i) => generateAd(i)));
    await catalog.destroy();

    const rpc: ClientProxy = new NatsRpcClient({ connection: stack.producer.connection, timeoutMs: 5000 });
    const rng = prng(4242);
    const questions = Array.from({ length: QUESTIONS }, (_, i) => ({
      agent_id: 'agent_kill',
      traffic: 'live' as const,
      session_id: 'sess_kill',
      message_id: `msg_${i}`,
      query: questionAbout(rng, i % 12),
      latency_budget_ms: 5000,
      request_id: `req_${i}`,
    }));
    const ask = (i: number) => firstValueFrom(rpc.send<RecommendResult>(RpcSubjects.recommend, questions[i]));

    let answered = 0;
    let unanswered = 0;
    let next = 0;
    const worker = async () => {
      while (next < QUESTIONS) {
        const i = next++;
        await ask(i).then(
          () => answered++,
          () => unanswered++, // in flight when the process died, or no responder until the restart
        );
      }
    };
    const asking = Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await waitFor(async () => answered >= QUESTIONS / 4, { timeoutMs: 120000, intervalMs: 10, what: 'answers under way' });
    await first.kill('SIGKILL');
    const second = await startService('recommendations', env, { label: 'recommendations-2', ready: 'ready' });
    stack.services.push(second);
    await asking;
    // The kill landed mid-answers: questions were left unanswered by the killed process.
    expect(unanswered).toBeGreaterThan(0);

    const sql = new pg.Client({ connectionString: stack.databaseUrl });
    await sql.connect();
    try {
      const { rows: recorded } = await sql.query<{ recommendation_id: string; message_id: string; rank: number }>(
        `SELECT recommendation_id, message_id, rank FROM recommendations.recommendation ORDER BY message_id, rank`,
      );
      expect(recorded.length).toBeGreaterThan(QUESTIONS / 4);
      await waitFor(async () => Number((await sql.query(`SELECT count(*)::int AS n FROM recommendations.outbox`)).rows[0].n) === 0, {
        timeoutMs: 60000,
        intervalMs: 250,
        what: 'the outbox to empty',
      });
      const events = (await storedEvents(stack.producer.manager, Streams.events)).filter((e) => e.subject === 'events.recommendation.generated');
      const published = events.map((e) => e.payload.recommendation_id as string).sort();
      expect(published).toEqual(recorded.map((r) => r.recommendation_id).sort());

      // The recorded answers are the answers: asked again (by the restarted process), the same ids in the same order.
      const byMessage = new Map<string, string[]>();
      for (const row of recorded) byMessage.set(row.message_id, [...(byMessage.get(row.message_id) ?? []), row.recommendation_id]);
      for (const [messageId, ids] of [...byMessage].slice(0, 40)) {
        const again = await ask(Number(messageId.slice('msg_'.length)));
        expect(again.recommendations.map((r) => r.recommendation_id)).toEqual(ids);
      }
    } finally {
      await sql.end();
    }
    expect(second.running()).toBe(true);
  }, 300_000);
});
