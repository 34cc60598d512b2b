import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { RpcSubjects, SettingsSubjects, Streams, type TimezoneSetResult, type TimezoneSetting } from '#libs/contracts';
import { NatsRpcClient, type NatsClient } from '#libs/nats';
import { connectNatsClient, storedEvents, useTestStack, waitFor } from '../support/index.js';
import { startTimezoneSettings } from '../support/oidc.js';

/**
 * timezone-settings over real NATS and PostgreSQL: get/set request/reply, the validation
 * matrix of IANA names, and exactly one settings.timezone.changed event per actual change.
 */
const stack = useTestStack();
let client: NatsClient;
let rpc: ClientProxy;

const set = (payload: unknown) => firstValueFrom(rpc.send<TimezoneSetResult>(RpcSubjects.timezoneSet, payload));
const get = (agentId: string) => firstValueFrom(rpc.send<TimezoneSetting>(RpcSubjects.timezoneGet, { agent_id: agentId }));

const settingsEvents = () => storedEvents(client.manager, Streams.settings);

const eventsOf = async (agentId: string) => (await settingsEvents()).filter((e) => e.payload.agent_id === agentId);

beforeAll(async () => {
  stack.track(await startTimezoneSettings(stack.urls));
  client = await connectNatsClient(stack, 'timezone-settings-test');
  rpc = new NatsRpcClient({ connection: client.connection, timeoutMs: 2000 });
});

describe('timezone.v1.get', () => {
  it('answers UTC, never set, for a platform without a setting', async () => {
    expect(await get('agent_fresh')).toEqual({ agent_id: 'agent_fresh', reporting_timezone: 'UTC', updated_at: null });
  });
});

describe('timezone.v1.set validation', () => {
  it.each([
    'UTC',
    'Etc/UTC',
    'Asia/Kathmandu',
    'America/New_York',
    'Australia/Lord_Howe',
    'America/Argentina/Buenos_Aires',
    'Etc/GMT+5',
    // links of the tz database
    'US/Eastern',
    'Asia/Katmandu',
    'Asia/Calcutta',
    'GB',
  ])('accepts %j', async (zone) => {
    expect(await set({ agent_id: 'agent_valid', reporting_timezone: zone })).toMatchObject({ agent_id: 'agent_valid', reporting_timezone: zone });
  });

  it.each([
    ['an offset', '+05:00'],
    ['a UTC offset', 'UTC+5'],
    ['a GMT offset', 'GMT-03:00'],
    ['an empty string', ''],
    ['a padded name', ' Asia/Kathmandu'],
    ['a lower-case name', 'asia/kathmandu'],
    ['an unknown name', 'Mars/Base'],
    ['a number', 42],
    ['null', null],
    ['an object', { zone: 'UTC' }],
  ])('refuses %s', async (_what, zone) => {
    await expect(set({ agent_id: 'agent_invalid', reporting_timezone: zone })).rejects.toMatchObject({ code: 'invalid_request', answered: true });
  });

  it('refuses a missing zone, a missing agent and unknown fields', async () => {
    for (const payload of [{ agent_id: 'agent_invalid' }, { reporting_timezone: 'UTC' }, { agent_id: 'agent_invalid', reporting_timezone: 'UTC', extra: 1 }]) {
      await expect(set(payload)).rejects.toMatchObject({ code: 'invalid_request', answered: true });
    }
    expect(await eventsOf('agent_invalid')).toEqual([]);
    expect(await get('agent_invalid')).toMatchObject({ reporting_timezone: 'UTC', updated_at: null });
  });
});

describe('settings.timezone.changed', () => {
  it('is published once per actual change, with Nats-Msg-Id = event_id, and never for a repeat', async () => {
    const first = await set({ agent_id: 'agent_events', reporting_timezone: 'Asia/Kathmandu' });
    const repeat = await set({ agent_id: 'agent_events', reporting_timezone: 'Asia/Kathmandu' });
    expect(first).toMatchObject({ changed: true });
    expect(repeat).toMatchObject({ changed: false });
    expect(repeat.updated_at).toBe(first.updated_at);

    const second = await set({ agent_id: 'agent_events', reporting_timezone: 'America/New_York' });
    expect(Date.parse(second.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));

    const events = await waitFor(async () => {
      const found = await eventsOf('agent_events');
      return found.length >= 2 ? found : undefined;
    });
    // Give a stray duplicate (e.g. from the outbox sweep) the chance to show up.
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf('agent_events')).toHaveLength(2);
    expect(events.map((e) => e.subject)).toEqual([SettingsSubjects.timezoneChanged, SettingsSubjects.timezoneChanged]);
    expect(events.map((e) => e.payload)).toEqual([
      { agent_id: 'agent_events', reporting_timezone: 'Asia/Kathmandu', updated_at: first.updated_at, event_id: expect.any(String) },
      { agent_id: 'agent_events', reporting_timezone: 'America/New_York', updated_at: second.updated_at, event_id: expect.any(String) },
    ]);
    for (const event of events) expect(event.msgId).toBe(event.payload.event_id);
    expect(await get('agent_events')).toEqual({ agent_id: 'agent_events', reporting_timezone: 'America/New_York', updated_at: second.updated_at });
  });

  it('concurrent sets of one platform serialize: one event per actual change', async () => {
    const zones = ['Europe/Paris', 'Europe/Paris', 'Asia/Tokyo', 'Asia/Tokyo', 'Europe/Paris'];
    const replies = await Promise.all(zones.map((zone) => set({ agent_id: 'agent_race', reporting_timezone: zone })));
    const changes = replies.filter((r) => r.changed).length;
    await new Promise((r) => setTimeout(r, 300));
    expect(await eventsOf('agent_race')).toHaveLength(changes);
  });

  it('publishes an event left in the outbox by a crash between commit and publish', async () => {
    const pg = (await import('pg')).default;
    const sql = new pg.Client({ connectionString: stack.db.url });
    await sql.connect();
    const payload = { agent_id: 'agent_crash', reporting_timezone: 'Asia/Tokyo', updated_at: '2026-01-01T00:00:00.000Z', event_id: 'tzc_crash' };
    try {
      await sql.query(`INSERT INTO timezone_settings.outbox (event_id, subject, payload, created_at) VALUES ($1, $2, $3, now() - interval '1 minute')`, [
        payload.event_id,
        SettingsSubjects.timezoneChanged,
        JSON.stringify(payload),
      ]);
    } finally {
      await sql.end();
    }
    const [event] = await waitFor(async () => {
      const found = await eventsOf('agent_crash');
      return found.length > 0 ? found : undefined;
    }, { timeoutMs: 15000 });
    expect(event).toEqual({ msgId: 'tzc_crash', subject: SettingsSubjects.timezoneChanged, payload });
  });

  it('leaves the outbox empty once events are published', async () => {
    const pg = (await import('pg')).default;
    const sql = new pg.Client({ connectionString: stack.db.url });
    await sql.connect();
    try {
      const { rows } = await sql.query('SELECT count(*)::int AS n FROM timezone_settings.outbox');
      expect(rows[0].n).toBe(0);
    } finally {
      await sql.end();
    }
  });
});
