/**
 * The dashboard's pages live in the URL fragment (`/dashboard/#/keys`): the gateway serves one
 * index.html at /dashboard/, reloads and bookmarks land on the right page, and the query
 * string stays free for the sign-in response (read once and removed at once).
 */
export const TIME_RANGES = ['today', '1d', '7d', '30d', '90d', 'all'] as const;
export type TimeRange = (typeof TIME_RANGES)[number];
export type Traffic = 'live' | 'test';
export type Granularity = 'hour' | 'day';

export const STATEMENT_STATUSES = ['LOCKED', 'BLOCKED', 'FAILED', 'PAID'] as const;
export type StatementStatus = (typeof STATEMENT_STATUSES)[number];

export type Route =
  | { page: 'reporting'; traffic: Traffic; range: TimeRange; granularity: Granularity }
  | { page: 'top'; traffic: Traffic; range: TimeRange }
  | { page: 'timezone' }
  | { page: 'keys' }
  | { page: 'payouts' }
  | { page: 'statements'; pageNumber: number; status: StatementStatus | null }
  | { page: 'history'; pageNumber: number }
  | { page: 'statement'; statementId: string }
  | { page: 'not-found'; path: string };

/** DESIGN §7: hourly buckets only for today, 1d and 7d. */
export function granularitiesFor(range: TimeRange): Granularity[] {
  return range === 'today' || range === '1d' || range === '7d' ? ['hour', 'day'] : ['day'];
}

/** DESIGN §7's default: hour for today/1d, day otherwise. */
export function defaultGranularity(range: TimeRange): Granularity {
  return range === 'today' || range === '1d' ? 'hour' : 'day';
}

export const DEFAULT_ROUTE: Route = { page: 'reporting', traffic: 'live', range: '30d', granularity: 'day' };

function pageNumberOf(value: string | null): number {
  if (value === null || !/^\d{1,9}$/.test(value)) return 1;
  return Math.max(1, Number(value));
}

/** The route of a location hash ("#/payouts/statements?page=2"); unknown paths are 'not-found'. */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  if (raw === '' || raw === '/') return DEFAULT_ROUTE;
  const [path = '', query = ''] = raw.split('?', 2);
  const params = new URLSearchParams(query);
  const segments = path.split('/').filter(Boolean);
  const [first, second, third] = segments;

  if (first === 'reporting' && segments.length === 1) {
    const traffic: Traffic = params.get('traffic') === 'test' ? 'test' : 'live';
    const rangeParam = params.get('range');
    const range: TimeRange = (TIME_RANGES as readonly string[]).includes(rangeParam ?? '') ? (rangeParam as TimeRange) : '30d';
    const granularityParam = params.get('granularity');
    const granularity = granularitiesFor(range).includes(granularityParam as Granularity) ? (granularityParam as Granularity) : defaultGranularity(range);
    return { page: 'reporting', traffic, range, granularity };
  }
  if (first === 'reporting' && second === 'top' && segments.length === 2) {
    const rangeParam = params.get('range');
    const range: TimeRange = (TIME_RANGES as readonly string[]).includes(rangeParam ?? '') ? (rangeParam as TimeRange) : '30d';
    return { page: 'top', traffic: params.get('traffic') === 'test' ? 'test' : 'live', range };
  }
  if (first === 'timezone' && segments.length === 1) return { page: 'timezone' };
  if (first === 'keys' && segments.length === 1) return { page: 'keys' };
  if (first === 'payouts') {
    if (segments.length === 1) return { page: 'payouts' };
    if (second === 'statements' && segments.length === 2) {
      const status = params.get('status');
      return {
        page: 'statements',
        pageNumber: pageNumberOf(params.get('page')),
        status: (STATEMENT_STATUSES as readonly string[]).includes(status ?? '') ? (status as StatementStatus) : null,
      };
    }
    if (second === 'statements' && segments.length === 3 && third) return { page: 'statement', statementId: decodeURIComponent(third) };
    if (second === 'history' && segments.length === 2) return { page: 'history', pageNumber: pageNumberOf(params.get('page')) };
  }
  return { page: 'not-found', path: `/${segments.join('/')}` };
}

/** The hash of a route ("#/reporting?traffic=test&range=7d&granularity=hour"). */
export function formatRoute(route: Route): string {
  switch (route.page) {
    case 'reporting':
      return `#/reporting?${new URLSearchParams({ traffic: route.traffic, range: route.range, granularity: route.granularity })}`;
    case 'top':
      return `#/reporting/top?${new URLSearchParams({ traffic: route.traffic, range: route.range })}`;
    case 'timezone':
    case 'keys':
    case 'payouts':
      return `#/${route.page}`;
    case 'statements': {
      const params = new URLSearchParams({ page: String(route.pageNumber) });
      if (route.status) params.set('status', route.status);
      return `#/payouts/statements?${params}`;
    }
    case 'history':
      return `#/payouts/history?page=${route.pageNumber}`;
    case 'statement':
      return `#/payouts/statements/${encodeURIComponent(route.statementId)}`;
    case 'not-found':
      return `#${route.path}`;
  }
}

/** Payout pages need the `agent` role (DESIGN §7). */
export function isPayoutRoute(route: Route): boolean {
  return route.page === 'payouts' || route.page === 'statements' || route.page === 'history' || route.page === 'statement';
}
