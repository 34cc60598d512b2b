import { lazy, Suspense, useState } from 'react';
import type { Report, ReportSeries } from '../api/types.js';
import { CsvDownload } from '../components/csv-download.js';
import { EarningsAreNotBalancesNote } from '../components/notes.js';
import { PageHeading } from '../components/page-heading.js';
import { ResourceView } from '../components/resource-view.js';
import { useServices } from '../components/services.js';
import { formatCount, formatMoney } from '../format/micros.js';
import { bucketLabel, formatInstant } from '../format/time.js';
import { defaultGranularity, granularitiesFor, TIME_RANGES, type Granularity, type Route, type TimeRange, type Traffic } from '../routing/routes.js';
import { navigate } from '../routing/use-route.js';
import { useResource } from '../state/use-resource.js';
import { RangeSelect, RefreshableHeading, TrafficSwitch } from './reporting-controls.js';
import { COVERAGE_LABELS, FIGURES, GRANULARITY_LABELS, RANGE_LABELS, STATUS_LABELS } from './reporting-labels.js';

// The chart library is loaded only when a chart is shown (not on the sign-in page).
const SeriesChart = lazy(() => import('./series-chart.js'));

type ReportingRoute = Extract<Route, { page: 'reporting' }>;

function go(route: ReportingRoute, change: Partial<ReportingRoute>) {
  const next = { ...route, ...change };
  if (!granularitiesFor(next.range).includes(next.granularity)) next.granularity = defaultGranularity(next.range);
  navigate(next);
}

export function ReportingPage({ route }: { route: ReportingRoute }) {
  const [refresh, setRefresh] = useState(0);
  return (
    <>
      <PageHeading title="Reporting">Reporting</PageHeading>
      <TrafficSwitch traffic={route.traffic} onChange={(traffic) => go(route, { traffic })} />

      <section aria-labelledby="totals-heading">
        <RefreshableHeading id="totals-heading" onRefresh={() => setRefresh((n) => n + 1)}>
          Totals by range
        </RefreshableHeading>
        <div className="table-scroll">
          <table className="totals" data-testid="totals">
            <caption className="visually-hidden">Totals of {route.traffic} traffic for each of the six ranges</caption>
            <thead>
              <tr>
                <th scope="col">Range</th>
                <th scope="col">Status</th>
                {FIGURES.map((f) => (
                  <th scope="col" key={f.key} className="number">
                    {f.label}
                  </th>
                ))}
                <th scope="col" className="number">
                  Earnings
                </th>
                <th scope="col">Coverage</th>
                <th scope="col">Processed through</th>
              </tr>
            </thead>
            <tbody>
              {TIME_RANGES.map((range) => (
                <TotalsRow key={range} range={range} traffic={route.traffic} refresh={refresh} />
              ))}
            </tbody>
          </table>
        </div>
        <EarningsAreNotBalancesNote />
      </section>

      <section aria-labelledby="series-heading">
        <h2 id="series-heading">Activity over time</h2>
        <div className="controls">
          <RangeSelect range={route.range} onChange={(range) => go(route, { range })} />
          <label>
            Buckets
            <select value={route.granularity} onChange={(event) => go(route, { granularity: event.target.value as Granularity })}>
              {granularitiesFor(route.range).map((granularity) => (
                <option key={granularity} value={granularity}>
                  {GRANULARITY_LABELS[granularity]}
                </option>
              ))}
            </select>
          </label>
        </div>
        <SeriesView route={route} refresh={refresh} />
      </section>
    </>
  );
}

function TotalsRow({ range, traffic, refresh }: { range: TimeRange; traffic: Traffic; refresh: number }) {
  const { api } = useServices();
  const { state, reload } = useResource<Report>(`${range}:${traffic}:${refresh}`, (signal) =>
    api.request<Report>('/agent/dashboard/reporting', { query: { time_range: range, traffic }, signal }),
  );
  const header = <th scope="row">{RANGE_LABELS[range]}</th>;
  if (state.phase !== 'ready' && !(state.phase === 'loading' && state.previous)) {
    return (
      <tr data-range={range} data-state={state.phase}>
        {header}
        <td colSpan={8}>
          <ResourceView state={state} reload={reload} what={`the ${RANGE_LABELS[range].toLowerCase()} report`}>
            {() => null}
          </ResourceView>
        </td>
      </tr>
    );
  }
  const report = state.phase === 'ready' ? state.data : state.previous!;
  return (
    <tr data-range={range} data-state="ready" data-report={JSON.stringify(report)}>
      {header}
      <td>{STATUS_LABELS[report.status] ?? report.status}</td>
      {FIGURES.map((f) => (
        <td key={f.key} className="number" data-figure={f.key}>
          {formatCount(report[f.key])}
        </td>
      ))}
      <td className="number" data-figure="earnings_micros">
        {formatMoney(report.earnings_micros, report.currency)}
      </td>
      <td>{COVERAGE_LABELS[report.earnings_coverage] ?? report.earnings_coverage}</td>
      <td className="processed">
        <time dateTime={report.processed_through}>{formatInstant(report.processed_through, report.timezone)}</time>
        <span className="zone" data-figure="timezone">
          {report.timezone}
        </span>
      </td>
    </tr>
  );
}

function SeriesView({ route, refresh }: { route: ReportingRoute; refresh: number }) {
  const { api } = useServices();
  const query = { time_range: route.range, granularity: route.granularity, traffic: route.traffic };
  const { state, reload } = useResource<ReportSeries>(`${route.range}:${route.granularity}:${route.traffic}:${refresh}`, (signal) =>
    api.request<ReportSeries>('/agent/dashboard/reporting/series', { query, signal }),
  );
  return (
    <ResourceView
      state={state}
      reload={reload}
      what="this series"
      isEmpty={(series) => series.buckets.length === 0}
      empty={<p>No activity in this period yet: no bucket to show.</p>}
    >
      {(series) => (
        <figure
          className="series"
          data-testid="series"
          data-series={JSON.stringify(series.buckets)}
          data-granularity={series.granularity}
          data-timezone={series.timezone}
          data-processed-through={series.processed_through}
        >
          <figcaption>
            {GRANULARITY_LABELS[series.granularity]} {series.is_test ? 'test' : 'live'} activity, {RANGE_LABELS[series.time_range].toLowerCase()}, in{' '}
            {series.timezone}; {STATUS_LABELS[series.status]?.toLowerCase() ?? series.status}, processed through{' '}
            <time dateTime={series.processed_through}>{formatInstant(series.processed_through, series.timezone)}</time>.
          </figcaption>
          <Suspense fallback={<p role="status">Loading the chart…</p>}>
            <SeriesChart series={series} />
          </Suspense>
          <CsvDownload
            path="/agent/dashboard/reporting/series"
            query={query}
            fallbackName={`report-${query.time_range}-${query.granularity}.csv`}
            what="series"
            label="Download CSV"
          />
          <details>
            <summary>Show the data as a table</summary>
            <SeriesTable series={series} />
          </details>
        </figure>
      )}
    </ResourceView>
  );
}

export function SeriesTable({ series }: { series: ReportSeries }) {
  return (
    <div className="table-scroll">
      <table data-testid="series-table">
        <caption className="visually-hidden">The chart's buckets</caption>
        <thead>
          <tr>
            <th scope="col">Bucket start ({series.timezone})</th>
            {FIGURES.map((f) => (
              <th scope="col" key={f.key} className="number">
                {f.label}
              </th>
            ))}
            <th scope="col" className="number">
              Earnings ({series.currency})
            </th>
          </tr>
        </thead>
        <tbody>
          {series.buckets.map((bucket) => (
            <tr key={bucket.start_at} data-start={bucket.start_at}>
              <th scope="row">
                <time dateTime={bucket.start_at}>{bucketLabel(bucket.start_at, series.granularity, series.timezone)}</time>
              </th>
              {FIGURES.map((f) => (
                <td key={f.key} className="number">
                  {formatCount(bucket[f.key])}
                </td>
              ))}
              <td className="number">{formatMoney(bucket.earnings_micros, series.currency)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
