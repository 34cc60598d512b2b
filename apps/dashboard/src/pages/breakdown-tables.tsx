import { useState } from 'react';
import type { ReportBreakdown } from '../api/types.js';
import { CsvDownload } from '../components/csv-download.js';
import { ResourceView } from '../components/resource-view.js';
import { useServices } from '../components/services.js';
import { formatCount, formatMoney } from '../format/micros.js';
import { formatInstant } from '../format/time.js';
import { PageHeading } from '../components/page-heading.js';
import type { Route, TimeRange, Traffic } from '../routing/routes.js';
import { navigate } from '../routing/use-route.js';
import { useResource } from '../state/use-resource.js';
import { RangeSelect, RefreshableHeading, TrafficSwitch } from './reporting-controls.js';
import { RANGE_LABELS, STATUS_LABELS } from './reporting-labels.js';

type By = ReportBreakdown['by'];
type Sort = 'exposures' | 'clicks' | 'conversions' | 'earnings_micros';

/** Rows shown per table (the API lists up to 100). */
export const TOP_ROWS = 10;

const COLUMNS: { key: keyof ReportBreakdown['other']; label: string; sortable: boolean }[] = [
  { key: 'exposures', label: 'Exposures', sortable: true },
  { key: 'clicks', label: 'Clicks', sortable: true },
  { key: 'engagements', label: 'Engagements', sortable: false },
  { key: 'conversions', label: 'Conversions', sortable: true },
  { key: 'earnings_micros', label: 'Earnings', sortable: true },
];

const NAMES: Record<By, { title: string; one: string; many: string }> = {
  ad: { title: 'Top ads', one: 'Ad', many: 'ads' },
  product: { title: 'Top products', one: 'Product', many: 'products' },
};

type TopRoute = Extract<Route, { page: 'top' }>;

/** The page of "Top ads" and "Top products" (DESIGN §9) for the chosen range and traffic. */
export function TopPage({ route }: { route: TopRoute }) {
  const [refresh, setRefresh] = useState(0);
  return (
    <>
      <PageHeading title="Top ads and products">Top ads and products</PageHeading>
      <TrafficSwitch traffic={route.traffic} onChange={(traffic) => navigate({ ...route, traffic })} />
      <section aria-labelledby="breakdown-heading">
        <RefreshableHeading id="breakdown-heading" onRefresh={() => setRefresh((n) => n + 1)}>
          {RANGE_LABELS[route.range]}
        </RefreshableHeading>
        <div className="controls">
          <RangeSelect range={route.range} onChange={(range) => navigate({ ...route, range })} />
        </div>
        <p className="hint">A recommendation counts under the ad and product it was generated for; until that is known it counts as unattributed.</p>
        <BreakdownTable by="ad" range={route.range} traffic={route.traffic} refresh={refresh} />
        <BreakdownTable by="product" range={route.range} traffic={route.traffic} refresh={refresh} />
      </section>
    </>
  );
}

function BreakdownTable({ by, range, traffic, refresh }: { by: By; range: TimeRange; traffic: Traffic; refresh: number }) {
  const { api } = useServices();
  const [sort, setSort] = useState<Sort>('earnings_micros');
  const names = NAMES[by];
  const query = { time_range: range, by, sort, limit: TOP_ROWS, traffic };
  const { state, reload } = useResource<ReportBreakdown>(`${by}:${range}:${traffic}:${sort}:${refresh}`, (signal) =>
    api.request<ReportBreakdown>('/agent/dashboard/reporting/breakdown', { query, signal }),
  );
  const headingId = `breakdown-${by}-heading`;
  return (
    <div className="breakdown" data-testid={`breakdown-${by}`} data-state={state.phase}>
      <h3 id={headingId}>{names.title}</h3>
      <ResourceView state={state} reload={reload} what={`the ${names.title.toLowerCase()}`}>
        {(breakdown) => (
          <>
            <div className="table-scroll">
              <table aria-labelledby={headingId} data-breakdown={JSON.stringify(breakdown)} data-sort={sort}>
                <caption className="visually-hidden">
                  The {TOP_ROWS} {names.many} with the most {COLUMNS.find((c) => c.key === sort)!.label.toLowerCase()}, then all other {names.many}. Sort by
                  another figure with the buttons in the column headers.
                </caption>
                <thead>
                  <tr>
                    <th scope="col">{names.one}</th>
                    {COLUMNS.map((column) => (
                      <th scope="col" key={column.key} className="number" aria-sort={column.key === sort ? 'descending' : undefined}>
                        {column.sortable ? (
                          <button type="button" className="sort" aria-pressed={column.key === sort} onClick={() => setSort(column.key as Sort)}>
                            {column.label}
                            <span className="visually-hidden">, sort by {column.label.toLowerCase()}</span>
                            <span aria-hidden="true">{column.key === sort ? ' ▼' : ''}</span>
                          </button>
                        ) : (
                          column.label
                        )}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {breakdown.rows.map((row) => (
                    <tr key={row.id ?? '\u0000unattributed'} data-id={row.id ?? ''}>
                      <th scope="row">{row.id ?? <em>Unattributed</em>}</th>
                      <FigureCells figures={row} currency={breakdown.currency} />
                    </tr>
                  ))}
                  <tr data-id="(other)">
                    <th scope="row">All other {names.many}</th>
                    <FigureCells figures={breakdown.other} currency={breakdown.currency} />
                  </tr>
                </tbody>
              </table>
            </div>
            <p className="processed">
              {STATUS_LABELS[breakdown.status] ?? breakdown.status}, processed through{' '}
              <time dateTime={breakdown.processed_through}>{formatInstant(breakdown.processed_through, breakdown.timezone)}</time>.
            </p>
            <CsvDownload
              path="/agent/dashboard/reporting/breakdown"
              query={query}
              fallbackName={`breakdown-${query.time_range}-by-${query.by}.csv`}
              what="table"
              label={`Download ${names.title.toLowerCase()} CSV`}
            />
          </>
        )}
      </ResourceView>
    </div>
  );
}

/** The five figures of a row, in the columns' order: counts grouped, earnings as money. */
function FigureCells({ figures, currency }: { figures: ReportBreakdown['other']; currency: string }) {
  return COLUMNS.map((column) => (
    <td key={column.key} className="number" data-figure={column.key}>
      {column.key === 'earnings_micros' ? formatMoney(figures.earnings_micros, currency) : formatCount(figures[column.key])}
    </td>
  ));
}
