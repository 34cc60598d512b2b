import {
  connectStackProducer,
  seedPlatform,
  startGateway,
  startIdentityProvider,
  startReportingProjection,
  useTestStack,
  waitFor,
  waitForConsumer,
  type Producer,
  type ServiceUnderTest,
} from '../support/index.js';
import { patchOnboarding, signIdToken, startTimezoneSettings } from '../support/oidc.js';
import type { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

/**
 * The whole path of issue 3: the owner PATCHes the reporting timezone with an ID token,
 * timezone-settings stores it and publishes settings.timezone.changed, reporting-projection
 * follows it, and the next report's `today` starts at local midnight of that zone. Checked
 * against an independent computation with Intl.DateTimeFormat (no luxon). A change made while
 * reporting-projection is down is applied when it comes back.
 */
const stack = useTestStack({ streams: true });
let reporting: ServiceUnderTest<ReportingProjectionEnv> | undefined;
let base: string;
let producer: Producer;
let apiKey: string;
let token: string;

const startReporting = () => startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 300 });

type Report = Record<string, unknown> & { start_at: string | null; end_at: string; processed_through: string; timezone: string };

async function report(range: string, zone: string): Promise<Report> {
  return waitFor(
    async () => {
      const response = await fetch(`${base}/agent/reporting?time_range=${range}`, { headers: { authorization: `Bearer ${apiKey}` } });
      if (response.status !== 200) return undefined;
      const body = (await response.json()) as Report;
      return body.timezone === zone ? body : undefined;
    },
    { timeoutMs: 20000, intervalMs: 150, what: `${range} report in ${zone}` },
  );
}

/** Local calendar date and wall-clock time of an instant in a zone, by Intl only. */
function local(instant: number, zone: string): { date: string; time: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(instant))
      .map((p) => [p.type, p.value]),
  );
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}:${parts.second}` };
}

/**
 * Independent `today` start: the earliest instant whose local date is the cutoff's local date.
 * Every offset in these zones is a multiple of 15 minutes, so the day starts on a UTC quarter
 * hour; walk back quarter by quarter while the local date stays the same.
 */
function independentStartOfToday(cutoff: number, zone: string): number {
  const QUARTER = 15 * 60_000;
  const date = local(cutoff, zone).date;
  let start = cutoff - (cutoff % QUARTER);
  if (local(start, zone).date !== date) start += QUARTER;
  while (local(start - QUARTER, zone).date === date) start -= QUARTER;
  return start;
}

beforeAll(async () => {
  const { jwks, key } = await startIdentityProvider(stack);
  stack.track(await startTimezoneSettings(stack.urls));
  reporting = await startReporting();
  stack.atEnd(() => reporting?.close());
  ({ base } = await startGateway(stack, { jwksUrl: jwks.url }));
  ({ key: apiKey } = await seedPlatform(stack, 'agent_tz', { owner: 'uid_tz' }));
  token = await signIdToken(key, { sub: 'uid_tz' });

  producer = await connectStackProducer(stack);
  const created = new Date(Date.now() - 5 * 60_000).toISOString();
  await producer.publish({
    subject: 'events.recommendation.shown',
    id: 'shown_tz1',
    payload: { event_id: 'shown_tz1', recommendation_id: 'tz1', agent_id: 'agent_tz', traffic: 'live', recommendation_created_at: created, occurred_at: created },
  });
});

describe('reporting timezone end to end', () => {
  it('reports in UTC before any change', async () => {
    const today = await report('today', 'UTC');
    const cutoff = Date.parse(today.processed_through);
    expect(Date.parse(today.start_at!)).toBe(independentStartOfToday(cutoff, 'UTC'));
  });

  it.each(['Asia/Kathmandu', 'America/New_York', 'Australia/Lord_Howe'])(
    'after PATCH %s, the next report starts today at local midnight and rolling windows stay UTC',
    async (zone) => {
      const patched = await patchOnboarding(base, token, { reporting_timezone: zone });
      expect(patched.status).toBe(200);
      expect(await patched.json()).toMatchObject({ agent_id: 'agent_tz', reporting_timezone: zone });

      const today = await report('today', zone);
      const cutoff = Date.parse(today.processed_through);
      const start = Date.parse(today.start_at!);
      expect(start).toBe(independentStartOfToday(cutoff, zone));
      expect(local(start, zone).time).toBe('00:00:00');
      expect(local(start, zone).date).toBe(local(cutoff, zone).date);
      expect(Date.parse(today.end_at)).toBe(cutoff);

      // Rolling windows: fixed UTC durations ending at the cutoff, whatever the zone; they name it too.
      const day = await report('1d', zone);
      expect(Date.parse(day.end_at) - Date.parse(day.start_at!)).toBe(24 * 3_600_000);
      expect(day.end_at).toBe(day.processed_through);
      const week = await report('7d', zone);
      expect(Date.parse(week.end_at) - Date.parse(week.start_at!)).toBe(7 * 24 * 3_600_000);
    },
  );

  it('applies a change made while reporting-projection is down once it is back', async () => {
    await reporting!.close();
    reporting = undefined;
    const patched = await patchOnboarding(base, token, { reporting_timezone: 'Asia/Kathmandu' });
    expect(patched.status).toBe(200);
    const down = await fetch(`${base}/agent/reporting?time_range=today`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(down.status).toBe(503);

    reporting = await startReporting();
    const today = await report('today', 'Asia/Kathmandu');
    expect(Date.parse(today.start_at!)).toBe(independentStartOfToday(Date.parse(today.processed_through), 'Asia/Kathmandu'));
  });

  it('ignores an older event and dead-letters an invalid one', async () => {
    const older = { agent_id: 'agent_tz', reporting_timezone: 'Europe/Paris', updated_at: '2020-01-01T00:00:00.000Z', event_id: 'tzc_old' };
    await producer.publish({ subject: 'settings.timezone.changed', id: 'tzc_old', payload: older });
    const invalid = { agent_id: 'agent_tz', reporting_timezone: '+05:00', updated_at: new Date().toISOString(), event_id: 'tzc_bad' };
    await producer.publish({ subject: 'settings.timezone.changed', id: 'tzc_bad', payload: invalid });
    const { jetstreamManager } = await import('@nats-io/jetstream');
    const manager = await jetstreamManager(producer.connection);
    const letter = await waitFor(async () => {
      try {
        return (await manager.streams.getMessage('DEAD_LETTERS', { last_by_subj: 'deadletter.settings.timezone.changed' })) ?? undefined;
      } catch {
        return undefined;
      }
    });
    expect(letter.json<{ event_id: string }>().event_id).toBe('tzc_bad');
    // Both were handled (one ignored as older, one dead-lettered): the zone is unchanged.
    await waitForConsumer(producer, 'SETTINGS', 'reporting-projection-settings');
    await new Promise((r) => setTimeout(r, 700));
    expect((await report('today', 'Asia/Kathmandu')).timezone).toBe('Asia/Kathmandu');
  });
});
