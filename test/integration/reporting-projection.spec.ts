import { Durables, RpcSubjects, Streams, type Report, type ReportReply, type RpcReply } from '#libs/contracts';
import {
  connectProducer,
  newTestDatabase,
  startNats,
  startReportingProjection,
  waitFor,
  type Producer,
  type ServiceUnderTest,
  type TestDatabase,
  type TestNats,
} from '../support/index.js';
import type { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { PublicationService } from '../../apps/reporting-projection/src/publication/publication.service.js';

describe('reporting-projection', () => {
  let nats: TestNats;
  let db: TestDatabase;
  let service: ServiceUnderTest<ReportingProjectionEnv>;
  let producer: Producer;

  beforeAll(async () => {
    nats = await startNats();
    db = newTestDatabase();
    service = await startReportingProjection({ natsUrl: nats.url, databaseUrl: db.url, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000 });
    producer = await connectProducer(nats.url);
  });

  afterAll(async () => {
    await producer?.close();
    await service?.close();
    await nats?.stop();
    await db?.drop();
  });

  const ask = async (agent_id: string, traffic: string, time_range: string) => {
    const reply = await producer.connection.request(RpcSubjects.reportGet, JSON.stringify({ agent_id, traffic, time_range }), { timeout: 5000 });
    return reply.json<RpcReply<ReportReply>>();
  };

  const caughtUp = async () =>
    waitFor(async () => {
      const info = await service.app.get(PublicationService)['nats'].manager.consumers.info(Streams.events, Durables.reportingProjection);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, { what: 'consumer caught up' });

  it('prepares on first request, then serves the counts of the applied events', async () => {
    const created = new Date(Date.now() - 10 * 60_000).toISOString();
    const base = { agent_id: 'agent_a', traffic: 'live', recommendation_created_at: created, occurred_at: created };
    await producer.publish({ subject: 'events.recommendation.shown', id: 'e1', payload: { ...base, event_id: 'e1', recommendation_id: 'r1' } });
    await producer.publish({ subject: 'events.recommendation.clicked', id: 'e2', payload: { ...base, event_id: 'e2', recommendation_id: 'r1', billable: true } });
    await producer.publish({ subject: 'events.recommendation.converted', id: 'e3', payload: { ...base, event_id: 'e3', recommendation_id: 'r2' } });
    await producer.publish({ subject: 'events.recommendation.engaged', id: 'e4', payload: { ...base, event_id: 'e4', recommendation_id: 'r2' } });
    await producer.publish({
      subject: 'events.accounting.entry',
      id: 'acc1',
      payload: { entry_id: 'acc1', agent_id: 'agent_a', traffic: 'live', recommendation_id: 'r2', amount_micros: 1_250_000, currency: 'USD', recorded_at: created },
    });
    await caughtUp();

    const first = await ask('agent_a', 'live', '1d');
    expect(first).toEqual({ ok: true, result: { status: 'preparing', agent_id: 'agent_a', time_range: '1d', is_test: false, report_schema_version: 1 } });

    const report = await waitFor(async () => {
      const reply = await ask('agent_a', 'live', '1d');
      return reply.ok && reply.result.status !== 'preparing' ? (reply.result as Report) : undefined;
    }, { what: 'first snapshot' });
    expect(report).toMatchObject({
      agent_id: 'agent_a',
      time_range: '1d',
      is_test: false,
      status: 'ready',
      exposures: 2,
      clicks: 2,
      engagements: 0,
      conversions: 1,
      earnings_micros: 1_250_000,
      pending_earnings_recommendations: 1,
      accounting_review_required: 0,
      earnings_coverage: 'unavailable',
      timezone: 'UTC',
    });
  });
});
