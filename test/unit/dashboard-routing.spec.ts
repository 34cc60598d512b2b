import { ConfigError, parseDashboardConfig } from '../../apps/dashboard/src/config/dashboard-config.js';
import { DEFAULT_ROUTE, formatRoute, granularitiesFor, parseRoute, type Route } from '../../apps/dashboard/src/routing/routes.js';
import { knownZones, searchZones } from '../../apps/dashboard/src/timezones/zone-search.js';

describe('routes in the URL fragment', () => {
  it('opens reporting by default', () => {
    expect(parseRoute('')).toEqual(DEFAULT_ROUTE);
    expect(parseRoute('#/')).toEqual(DEFAULT_ROUTE);
  });

  it('reads reporting parameters and corrects what DESIGN §7 refuses', () => {
    expect(parseRoute('#/reporting?traffic=test&range=7d&granularity=hour')).toEqual({ page: 'reporting', traffic: 'test', range: '7d', granularity: 'hour' });
    // hour with 30d/90d/all is refused by the API: the page asks for days
    expect(parseRoute('#/reporting?range=90d&granularity=hour')).toEqual({ page: 'reporting', traffic: 'live', range: '90d', granularity: 'day' });
    // the API's default granularity: hour for today/1d
    expect(parseRoute('#/reporting?range=today')).toMatchObject({ range: 'today', granularity: 'hour' });
    expect(parseRoute('#/reporting?range=forever&traffic=bogus')).toEqual({ page: 'reporting', traffic: 'live', range: '30d', granularity: 'day' });
    expect(granularitiesFor('all')).toEqual(['day']);
    expect(granularitiesFor('1d')).toEqual(['hour', 'day']);
  });

  it('reads payout pages, their paging and status filter', () => {
    expect(parseRoute('#/payouts')).toEqual({ page: 'payouts' });
    expect(parseRoute('#/payouts/statements?page=3&status=PAID')).toEqual({ page: 'statements', pageNumber: 3, status: 'PAID' });
    expect(parseRoute('#/payouts/statements?page=0&status=paid')).toEqual({ page: 'statements', pageNumber: 1, status: null });
    expect(parseRoute('#/payouts/statements?page=abc')).toEqual({ page: 'statements', pageNumber: 1, status: null });
    expect(parseRoute('#/payouts/history?page=2')).toEqual({ page: 'history', pageNumber: 2 });
    expect(parseRoute('#/payouts/statements/st%2F1%20a')).toEqual({ page: 'statement', statementId: 'st/1 a' });
  });

  it('says not found for anything else', () => {
    expect(parseRoute('#/nowhere/else')).toEqual({ page: 'not-found', path: '/nowhere/else' });
    expect(parseRoute('#/keys/extra')).toEqual({ page: 'not-found', path: '/keys/extra' });
  });

  it('formats every route so that it parses back to itself', () => {
    const routes: Route[] = [
      DEFAULT_ROUTE,
      { page: 'reporting', traffic: 'test', range: 'today', granularity: 'hour' },
      { page: 'timezone' },
      { page: 'keys' },
      { page: 'payouts' },
      { page: 'statements', pageNumber: 4, status: 'BLOCKED' },
      { page: 'statements', pageNumber: 1, status: null },
      { page: 'history', pageNumber: 7 },
      { page: 'statement', statementId: 'st_2026-10/#1' },
    ];
    for (const route of routes) expect(parseRoute(formatRoute(route))).toEqual(route);
  });
});

describe('config.json (the contract of apps/dashboard/README.md)', () => {
  it('reads a full config, trimming trailing slashes', () => {
    expect(parseDashboardConfig({ issuer: 'http://127.0.0.1:3900/', client_id: 'weave-dashboard', role_claim: 'roles', api_base_url: 'https://api.example.com/' })).toEqual({
      issuer: 'http://127.0.0.1:3900',
      client_id: 'weave-dashboard',
      role_claim: 'roles',
      api_base_url: 'https://api.example.com',
    });
  });

  it('reads "sign-in not configured" and the defaults', () => {
    expect(parseDashboardConfig({ issuer: null, client_id: null })).toEqual({ issuer: null, client_id: null, role_claim: 'role', api_base_url: '' });
  });

  it('refuses what cannot work', () => {
    expect(() => parseDashboardConfig([])).toThrow(ConfigError);
    expect(() => parseDashboardConfig({ issuer: 'http://idp', client_id: null })).toThrow(/together/);
    expect(() => parseDashboardConfig({ issuer: 'javascript:alert(1)', client_id: 'c' })).toThrow(/http/);
    expect(() => parseDashboardConfig({ issuer: 'not a url', client_id: 'c' })).toThrow(/absolute URL/);
    expect(() => parseDashboardConfig({ issuer: 'http://idp', client_id: 7 })).toThrow(/client_id/);
  });
});

describe('time zone search', () => {
  const supported = ['Asia/Katmandu', 'Asia/Calcutta', 'America/New_York', 'Europe/Berlin', 'Australia/Lord_Howe', 'Not/AZone'];

  it('lists UTC first, then the browser zones sorted, without invalid names', () => {
    expect(knownZones(supported)).toEqual(['UTC', 'America/New_York', 'Asia/Calcutta', 'Asia/Katmandu', 'Australia/Lord_Howe', 'Europe/Berlin']);
    expect(knownZones(supported, ['Asia/Kathmandu', null])).toContain('Asia/Kathmandu');
  });

  it('finds by any part of the name, spaces for underscores, any case', () => {
    const zones = knownZones(supported);
    expect(searchZones(zones, 'new york')).toEqual(['America/New_York']);
    expect(searchZones(zones, 'LORD')).toEqual(['Australia/Lord_Howe']);
    expect(searchZones(zones, '')).toEqual(zones);
    expect(searchZones(zones, 'zzz')).toEqual([]);
  });

  it('offers the modern spelling that the browser list lacks (Asia/Kathmandu, Asia/Kolkata)', () => {
    const zones = knownZones(supported);
    expect(searchZones(zones, 'Kathmandu')).toEqual(['Asia/Kathmandu']);
    expect(searchZones(zones, 'asia/kathmandu')).toEqual(['Asia/Kathmandu']);
    expect(searchZones(zones, 'kolkata')).toEqual(['Asia/Kolkata']);
    expect(searchZones(zones, 'Asia/Katmandu')).toEqual(['Asia/Katmandu']);
  });
});
