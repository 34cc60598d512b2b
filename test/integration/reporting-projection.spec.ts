import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { BroadcastSubjects, Durables, RpcSubjects, Streams, decodeReportsPublished, encodeReportsPublished, type ReportReply } from '#libs/contracts';
import { NatsRpcClient } from '#libs/nats';
import { DataSource } from 'typeorm';
import {
  connectStackProducer,
  expectDeadLetters,
  readDeadLetters,
  startReportingProjection,
  useTestStack,
  waitForConsumer,
  waitFor,
  type Producer,
  type ServiceUnderTest,
} from '../support/index.js';
import type { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';
import { PublicationService } from '../../apps/reporting-projection/src/publication/publication.service.js';
import { reportPeriod } from '../../apps/reporting-projection/src/rules/periods.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';

describe('reporting-projection', () => {
  const stack = useTestStack();
  let service: ServiceUnderTest<ReportingProjectionEnv>;
  let producer: Producer;
  let rpc: ClientProxy;

  beforeAll(async () => {
    service = stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000 }));
    producer = await connectStackProducer(stack);
    rpc = new NatsRpcClient({ connection: producer.connection, timeoutMs: 5000 });
  });

  const ask = (agent_id: string, traffic: string, time_range: string) => firstValueFrom(rpc.send<ReportReply>(RpcSubjects.reportGet, { agent_id, traffic, time_range }));

  const caughtUp = () => waitForConsumer(producer, Streams.events, Durables.reportingProjection, { what: 'consumer caught up' });

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
    expect(first).toEqual({ status: 'preparing', agent_id: 'agent_a', time_range: '1d', is_test: false, report_schema_version: 1 });

    const report = await waitFor(async () => {
      const reply = await ask('agent_a', 'live', '1d');
      return reply.status !== 'preparing' ? reply : undefined;
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

  it('exposes consumer lag, applied events and the age of the published reports', async () => {
    await service.app.get(PublicationService).runCycle(true);
    const metrics = await waitFor(async () => {
      const text = await (await fetch(`${service.url}/metrics`)).text();
      return /weave_consumer_pending_messages\{[^}]*durable="reporting-projection"[^}]*\} 0/.test(text) && /weave_report_age_seconds\{[^}]*\} \d/.test(text) ? text : undefined;
    }, { timeoutMs: 15000, what: 'lag and report age metrics' });
    expect(metrics).toMatch(/weave_events_applied_total\{[^}]*kind="shown"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/weave_publication_seconds_count\{[^}]*outcome="published"[^}]*\} [1-9]/);
  });

  it("keeps its cached reports across another scope's preparation, and drops one scope's on its announcement and all on a cycle's", async () => {
    const db = service.app.get(DataSource);
    /**
     * Listens for the announcement of the agent's scope; `seen` resolves once it came. A request sent after the
     * test saw the announcement reaches the replica after it (the server delivers to a connection
     * in order), so the replica has handled it by then.
     */
    const announcedFor = async (agent: string) => {
      const subscription = producer.connection.subscribe(BroadcastSubjects.reportsPublished);
      await producer.connection.flush();
      const seen = (async () => {
        for await (const msg of subscription) if (decodeReportsPublished(msg.data)?.agent_id === agent) return subscription.unsubscribe();
      })();
      return { seen }; // not the promise itself: awaiting this function would then wait for the announcement
    };
    const exposuresOf = async (agent: string) => ((await ask(agent, 'live', '7d')) as { exposures?: number }).exposures;
    const setExposures = (agent: string, exposures: number) =>
      db.query(`UPDATE reporting.report_snapshot SET exposures = $2 WHERE agent_id = $1 AND traffic = 'live' AND time_range = '7d'`, [agent, exposures]);
    const prepared = (agent: string) =>
      waitFor(async () => ((await ask(agent, 'live', '7d')).status !== 'preparing' ? true : undefined), { what: `${agent} 7d prepared` });

    const aAnnounced = await announcedFor('agent_cache_a');
    await prepared('agent_cache_a');
    await aAnnounced.seen;
    expect(await exposuresOf('agent_cache_a')).toBe(0); // read once more after its announcement: now kept
    await setExposures('agent_cache_a', 4242);
    expect(await exposuresOf('agent_cache_a')).toBe(0); // from memory, not the table

    // Another platform's first preparation announces its scope alone: agent_cache_a stays cached.
    const bAnnounced = await announcedFor('agent_cache_b');
    await prepared('agent_cache_b');
    await bAnnounced.seen;
    expect(await exposuresOf('agent_cache_a')).toBe(0);

    // Its own scope announced: dropped, read again.
    producer.connection.publish(BroadcastSubjects.reportsPublished, encodeReportsPublished({ agent_id: 'agent_cache_a', traffic: 'live', time_range: '7d' }));
    await waitFor(async () => ((await exposuresOf('agent_cache_a')) === 4242 ? true : undefined), { what: 'scope dropped by its announcement' });

    // A cycle (empty body) drops everything.
    await setExposures('agent_cache_a', 4343);
    await setExposures('agent_cache_b', 77);
    expect(await exposuresOf('agent_cache_a')).toBe(4242);
    producer.connection.publish(BroadcastSubjects.reportsPublished, new Uint8Array());
    await waitFor(async () => ((await exposuresOf('agent_cache_a')) === 4343 && (await exposuresOf('agent_cache_b')) === 77 ? true : undefined), { what: 'all dropped by a cycle' });
  });

  it('dead-letters invalid and conflicting events with the reason, and keeps consuming', async () => {
    // Events of 5 minutes ago, read over the last 24 hours ("today" would miss them just after midnight UTC).
    const created = new Date(Date.now() - 5 * 60_000).toISOString();
    const valid = { agent_id: 'agent_dl', traffic: 'test', recommendation_created_at: created, occurred_at: created };
    await producer.publishRaw('events.recommendation.shown', '{not json', 'dl1');
    await producer.publishRaw('events.recommendation.shown', JSON.stringify({ ...valid, event_id: 'dl2' }), 'dl2'); // no recommendation_id
    await producer.publishRaw('events.recommendation.teleported', JSON.stringify({ ...valid, event_id: 'dl3', recommendation_id: 'r_dl' }), 'dl3');
    await producer.publishRaw('events.accounting.entry', JSON.stringify({ entry_id: 'dl4', agent_id: 'agent_dl', traffic: 'test', recommendation_id: null, amount_micros: 1.5, currency: 'USD', recorded_at: created }), 'dl4');
    await producer.publish({ subject: 'events.recommendation.shown', id: 'ok1', payload: { ...valid, event_id: 'ok1', recommendation_id: 'r_dl' } });
    await producer.publish({ subject: 'events.recommendation.clicked', id: 'dl5', payload: { ...valid, agent_id: 'agent_other', event_id: 'dl5', recommendation_id: 'r_dl' } });
    await producer.publish({ subject: 'events.recommendation.clicked', id: 'ok2', payload: { ...valid, event_id: 'ok2', recommendation_id: 'r_dl2' } });
    await caughtUp();

    const letters = expectDeadLetters(await readDeadLetters(producer.connection, { max: 5 }), [
      ['deadletter.events.recommendation.shown', /not valid UTF-8 JSON/],
      ['deadletter.events.recommendation.shown', /recommendation_id/],
      ['deadletter.events.recommendation.teleported', /unknown recommendation event kind/],
      ['deadletter.events.accounting.entry', /amount_micros/],
      ['deadletter.events.recommendation.clicked', /disagrees/],
    ]);
    expect(letters[0].data).toBe('{not json');

    const report = await waitFor(async () => {
      const reply = await ask('agent_dl', 'test', '1d');
      return reply.status !== 'preparing' ? reply : undefined;
    }, { what: 'report' });
    expect(report).toMatchObject({ is_test: true, exposures: 2, clicks: 1 });
  });
});

describe('reporting-projection restarted mid-stream', () => {
  const stack = useTestStack({ streams: true });

  it('loses and doubles nothing', async () => {
    const producer = await connectStackProducer(stack);
    let service: ServiceUnderTest<ReportingProjectionEnv> | undefined;
    stack.atEnd(() => service?.close());
    const now = Date.now();
    const events: { subject: string; event: ModelEvent }[] = [];
    for (let r = 0; r < 3000; r++) {
      const created = new Date(now - 60_000 - ((r * 7919) % (3 * 86_400_000))).toISOString();
      const base = { type: 'recommendation' as const, recommendation_id: `rec_${r}`, agent_id: `agent_${r % 3}`, traffic: r % 4 === 0 ? ('test' as const) : ('live' as const), recommendation_created_at: created, occurred_at: created };
      const kinds = (['generated', 'shown', 'clicked', 'engaged', 'converted'] as const).slice(0, 1 + (r % 5));
      for (const kind of kinds) events.push({ subject: `events.recommendation.${kind}`, event: { ...base, kind, event_id: `evt_${kind}_${r}`, billable: kind === 'clicked' } });
      if (r % 3 === 0) {
        events.push({ subject: 'events.accounting.entry', event: { type: 'accounting', entry_id: `acc_${r}`, agent_id: base.agent_id, traffic: base.traffic, recommendation_id: base.recommendation_id, amount_micros: 1000 + r, currency: r % 30 === 0 ? 'EUR' : 'USD', recorded_at: created } });
      }
    }
    // Accounting first for some: move a few entries to the front of the stream.
    events.unshift(...events.splice(events.length - 40, 40).filter((e) => e.event.type === 'accounting'));
    for (const { subject, event } of events) {
      const { type: _t, kind: _k, ...payload } = event as ModelEvent & { kind?: string };
      await producer.publishRaw(subject, JSON.stringify(payload), 'event_id' in event ? event.event_id : event.entry_id);
    }

    service = await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000, INGEST_BATCH_SIZE: 200 });
    const inspector = await connectStackProducer(stack);
    const manager = await (await import('@nats-io/jetstream')).jetstreamManager(inspector.connection);
    await waitFor(async () => (await manager.consumers.info(Streams.events, Durables.reportingProjection)).ack_floor.stream_seq > 2000, { what: 'ingest under way' });
    await service.close();
    const floorAtStop = (await manager.consumers.info(Streams.events, Durables.reportingProjection)).ack_floor.stream_seq;
    expect(floorAtStop).toBeLessThan(events.length);

    service = await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000, INGEST_BATCH_SIZE: 200 });
    await waitForConsumer(inspector, Streams.events, Durables.reportingProjection, { what: 'caught up after restart' });

    const processedThrough = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const builder = service.app.get(PublicationService)['builder'];
    const scopes = ['agent_0', 'agent_1', 'agent_2'].flatMap((agentId) => ['live', 'test'].map((traffic) => ({ agentId, traffic, timeRange: '7d' as const })));
    const snapshots = await builder.build(scopes, processedThrough, new Date());
    const modelEvents = events.map((e) => e.event);
    for (const snapshot of snapshots) {
      const period = reportPeriod('7d', processedThrough, 'UTC');
      const { reconciled_through: _r, ...expected } = referenceReport(modelEvents, { agent_id: snapshot.agentId, traffic: snapshot.traffic as 'live' | 'test', start: period.start, end: period.end });
      expect(expected.exposures).toBeGreaterThan(0);
      for (const [name, value] of Object.entries(expected)) expect({ name, value: snapshot[name as keyof typeof snapshot] }).toEqual({ name, value });
    }
    const [{ count }] = await service.app.get(DataSource).query(`SELECT count(*)::int AS count FROM reporting.accounting_entry`);
    expect(count).toBe(events.filter((e) => e.event.type === 'accounting').length);
  });
});
