import type { PayoutBalance, PayoutOverviewReply, PayoutPage, PayoutReadiness, PayoutStatement } from '../api/types.js';
import { AvailableIsNotSentNote, EarningsAreNotBalancesNote } from '../components/notes.js';
import { PageHeading } from '../components/page-heading.js';
import { ResourceView } from '../components/resource-view.js';
import { useServices } from '../components/services.js';
import { formatMicros, formatMoney } from '../format/micros.js';
import { formatUtc } from '../format/time.js';
import { STATEMENT_STATUSES, type Route, type StatementStatus } from '../routing/routes.js';
import { navigate, RouteLink } from '../routing/use-route.js';
import { useResource } from '../state/use-resource.js';

const PAGE_SIZE = 20;

const SETUP_LABELS: Record<string, string> = { not_started: 'Not started', in_progress: 'In progress', complete: 'Complete' };

function PayoutsNav({ current }: { current: 'overview' | 'statements' | 'history' }) {
  const links: { key: typeof current; label: string; to: Route }[] = [
    { key: 'overview', label: 'Overview', to: { page: 'payouts' } },
    { key: 'statements', label: 'Statements', to: { page: 'statements', pageNumber: 1, status: null } },
    { key: 'history', label: 'History', to: { page: 'history', pageNumber: 1 } },
  ];
  return (
    <nav aria-label="Payouts" className="subnav">
      <ul>
        {links.map((link) => (
          <li key={link.key}>
            <RouteLink to={link.to} aria-current={link.key === current ? 'page' : undefined}>
              {link.label}
            </RouteLink>
          </li>
        ))}
      </ul>
    </nav>
  );
}

export function PayoutsOverviewPage() {
  const { api } = useServices();
  const { state, reload } = useResource<PayoutOverviewReply>('overview', (signal) => api.request<PayoutOverviewReply>('/agent-payouts/me/overview', { signal }));
  return (
    <>
      <PageHeading title="Payouts">Payouts</PageHeading>
      <PayoutsNav current="overview" />
      <AvailableIsNotSentNote />
      <EarningsAreNotBalancesNote />
      <ResourceView state={state} reload={reload} what="your payout overview">
        {(overview) => (
          <>
            <Balances balances={overview.balances} />
            <Readiness readiness={overview.readiness} />
            <section aria-labelledby="recent-heading">
              <h2 id="recent-heading">Recent statements</h2>
              {overview.recent_statements.length === 0 ? <p>No payout statements yet.</p> : <StatementsTable items={overview.recent_statements} caption="The most recent statements" />}
            </section>
          </>
        )}
      </ResourceView>
    </>
  );
}

function Balances({ balances }: { balances: PayoutBalance[] }) {
  return (
    <section aria-labelledby="balances-heading">
      <h2 id="balances-heading">Balances</h2>
      {balances.length === 0 ? (
        <p>No balance yet: balances appear once earnings are recorded in the ledger.</p>
      ) : (
        <div className="table-scroll">
          <table data-testid="balances">
            <caption className="visually-hidden">Payout balances by currency</caption>
            <thead>
              <tr>
                <th scope="col">Currency</th>
                <th scope="col" className="number">
                  Pending
                </th>
                <th scope="col" className="number">
                  Available
                </th>
                <th scope="col" className="number">
                  Locked
                </th>
                <th scope="col" className="number">
                  Paid out
                </th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {balances.map((b) => (
                <tr key={b.currency} data-currency={b.currency}>
                  <th scope="row">{b.currency}</th>
                  <td className="number">{formatMoney(b.pending_micros, b.currency)}</td>
                  <td className="number">{formatMoney(b.available_micros, b.currency)}</td>
                  <td className="number">{formatMoney(b.locked_micros, b.currency)}</td>
                  <td className="number">{formatMoney(b.paid_out_micros, b.currency)}</td>
                  <td>
                    <time dateTime={b.updated_at}>{formatUtc(b.updated_at)}</time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <dl className="legend">
        <dt>Pending</dt>
        <dd>Recorded earnings not yet available.</dd>
        <dt>Available</dt>
        <dd>Settled earnings available for payout consideration (not sent).</dd>
        <dt>Locked</dt>
        <dd>Reserved for a payout statement, including amounts held in blocked or failed payout processing.</dd>
        <dt>Paid out</dt>
        <dd>Recorded as paid.</dd>
      </dl>
    </section>
  );
}

function Readiness({ readiness }: { readiness: PayoutReadiness }) {
  const steps = [
    { done: readiness.setup_status === 'complete', text: `Recipient setup: ${SETUP_LABELS[readiness.setup_status] ?? readiness.setup_status}` },
    ...readiness.missing_fields.map((field) => ({ done: false, text: `Missing: ${field}` })),
    { done: !readiness.blocked_reason, text: readiness.blocked_reason ? `Blocked: ${readiness.blocked_reason}` : 'Not blocked' },
  ];
  return (
    <section aria-labelledby="readiness-heading">
      <h2 id="readiness-heading">Payout readiness</h2>
      <ul className="checklist" data-testid="readiness">
        {steps.map((step) => (
          <li key={step.text} data-done={step.done}>
            <span className="check" aria-hidden="true">
              {step.done ? '✓' : '✗'}
            </span>
            <span className="visually-hidden">{step.done ? 'Done: ' : 'To do: '}</span>
            {step.text}
          </li>
        ))}
      </ul>
      {readiness.thresholds.length > 0 ? (
        <>
          <h3>Minimum payout</h3>
          <ul>
            {readiness.thresholds.map((t) => (
              <li key={t.currency}>{formatMoney(t.minimum_payout_micros, t.currency)}</li>
            ))}
          </ul>
        </>
      ) : null}
      {readiness.updated_at ? (
        <p className="hint">
          Updated <time dateTime={readiness.updated_at}>{formatUtc(readiness.updated_at)}</time>.
        </p>
      ) : (
        <p className="hint">No payout setup is known yet.</p>
      )}
    </section>
  );
}

function StatementsTable({ items, caption }: { items: PayoutStatement[]; caption: string }) {
  return (
    <div className="table-scroll">
      <table data-testid="statements">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            <th scope="col">Status</th>
            <th scope="col" className="number">
              Net earnings
            </th>
            <th scope="col">Transfer</th>
          </tr>
        </thead>
        <tbody>
          {items.map((s) => (
            <tr key={s.statement_id} data-statement-id={s.statement_id}>
              <th scope="row">
                <RouteLink to={{ page: 'statement', statementId: s.statement_id }}>
                  {formatUtc(s.period_start).slice(0, 10)} – {formatUtc(s.period_end).slice(0, 10)}
                </RouteLink>
              </th>
              <td>
                <span className={`badge badge-${s.status.toLowerCase()}`}>{s.status}</span>
              </td>
              <td className="number">{s.net_earnings_micros === null ? 'Not provided' : formatMoney(s.net_earnings_micros, s.currency)}</td>
              <td>{s.transfer ? s.transfer.status : 'None yet'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Pager({ page, pageSize, total, to }: { page: number; pageSize: number; total: number; to: (page: number) => Route }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav aria-label="Pages" className="pager">
      {page > 1 ? <RouteLink to={to(page - 1)}>Previous page</RouteLink> : <span aria-hidden="true">Previous page</span>}
      <span>
        Page {page} of {pages} ({total} statement{total === 1 ? '' : 's'})
      </span>
      {page < pages ? <RouteLink to={to(page + 1)}>Next page</RouteLink> : <span aria-hidden="true">Next page</span>}
    </nav>
  );
}

export function StatementsPage({ route }: { route: Extract<Route, { page: 'statements' }> }) {
  const { api } = useServices();
  const { state, reload } = useResource<PayoutPage<PayoutStatement>>(`statements:${route.pageNumber}:${route.status ?? ''}`, (signal) =>
    api.request<PayoutPage<PayoutStatement>>('/agent-payouts/me/statements', {
      query: { page: route.pageNumber, page_size: PAGE_SIZE, status: route.status },
      signal,
    }),
  );
  return (
    <>
      <PageHeading title="Payout statements">Payout statements</PageHeading>
      <PayoutsNav current="statements" />
      <div className="controls">
        <label>
          Status
          <select
            value={route.status ?? ''}
            onChange={(event) => navigate({ page: 'statements', pageNumber: 1, status: (event.target.value || null) as StatementStatus | null })}
          >
            <option value="">All statuses</option>
            {STATEMENT_STATUSES.map((status) => (
              <option key={status} value={status}>
                {status}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ResourceView
        state={state}
        reload={reload}
        what="your statements"
        isEmpty={(page) => page.items.length === 0 && page.total === 0}
        empty={<p>No statements{route.status ? ` with status ${route.status}` : ''}.</p>}
      >
        {(page) => (
          <>
            <StatementsTable items={page.items} caption="Payout statements" />
            <Pager page={page.page} pageSize={page.page_size} total={page.total} to={(n) => ({ ...route, pageNumber: n })} />
          </>
        )}
      </ResourceView>
    </>
  );
}

export function HistoryPage({ route }: { route: Extract<Route, { page: 'history' }> }) {
  const { api } = useServices();
  const { state, reload } = useResource<PayoutPage<PayoutStatement>>(`history:${route.pageNumber}`, (signal) =>
    api.request<PayoutPage<PayoutStatement>>('/agent-payouts/me/history', { query: { page: route.pageNumber, page_size: PAGE_SIZE }, signal }),
  );
  return (
    <>
      <PageHeading title="Payout history">Payout history</PageHeading>
      <PayoutsNav current="history" />
      <p>Locked, blocked, failed and paid statements, newest first.</p>
      <ResourceView state={state} reload={reload} what="your payout history" isEmpty={(page) => page.total === 0} empty={<p>No payout history yet.</p>}>
        {(page) => (
          <>
            <StatementsTable items={page.items} caption="Payout history" />
            <Pager page={page.page} pageSize={page.page_size} total={page.total} to={(n) => ({ page: 'history', pageNumber: n })} />
          </>
        )}
      </ResourceView>
    </>
  );
}

function amount(value: number | null, currency: string | null): string {
  if (value === null) return 'Not provided';
  return currency ? formatMoney(value, currency) : formatMicros(value);
}

export function StatementPage({ statementId }: { statementId: string }) {
  const { api } = useServices();
  const { state, reload } = useResource<PayoutStatement>(`statement:${statementId}`, (signal) =>
    api.request<PayoutStatement>(`/agent-payouts/me/statements/${encodeURIComponent(statementId)}`, { signal }),
  );
  return (
    <>
      <PageHeading title="Payout statement">Payout statement</PageHeading>
      <PayoutsNav current="statements" />
      <ResourceView state={state} reload={reload} what="this statement">
        {(s) => (
          <div data-testid="statement" data-statement-id={s.statement_id}>
            <dl className="facts">
              <dt>Statement</dt>
              <dd>
                <code>{s.statement_id}</code>
              </dd>
              <dt>Period</dt>
              <dd>
                <time dateTime={s.period_start}>{formatUtc(s.period_start)}</time> to <time dateTime={s.period_end}>{formatUtc(s.period_end)}</time>
              </dd>
              <dt>Status</dt>
              <dd>
                <span className={`badge badge-${s.status.toLowerCase()}`}>{s.status}</span>
              </dd>
              <dt>Gross earnings</dt>
              <dd>{amount(s.gross_earnings_micros, s.currency)}</dd>
              <dt>Service fee</dt>
              <dd>{amount(s.service_fee_micros, s.currency)}</dd>
              <dt>Net earnings</dt>
              <dd>{amount(s.net_earnings_micros, s.currency)}</dd>
              {s.blocked_reason ? (
                <>
                  <dt>Blocked because</dt>
                  <dd>{s.blocked_reason}</dd>
                </>
              ) : null}
              {s.failure ? (
                <>
                  <dt>Failure</dt>
                  <dd>
                    <code>{s.failure.code}</code>: {s.failure.message}
                  </dd>
                </>
              ) : null}
            </dl>
            <section aria-labelledby="transfer-heading">
              <h2 id="transfer-heading">Transfer</h2>
              {s.transfer ? (
                <dl className="facts" data-testid="transfer">
                  <dt>Reference</dt>
                  <dd>
                    <code>{s.transfer.transfer_reference}</code>
                  </dd>
                  <dt>Status</dt>
                  <dd>{s.transfer.status}</dd>
                  <dt>Initiated</dt>
                  <dd>{s.transfer.initiated_at ? <time dateTime={s.transfer.initiated_at}>{formatUtc(s.transfer.initiated_at)}</time> : 'Not yet'}</dd>
                  <dt>Settled</dt>
                  <dd>{s.transfer.settled_at ? <time dateTime={s.transfer.settled_at}>{formatUtc(s.transfer.settled_at)}</time> : 'Not yet'}</dd>
                  <dt>Amount sent</dt>
                  <dd>{amount(s.transfer.source_amount_micros, s.transfer.source_currency)}</dd>
                  <dt>Amount received</dt>
                  <dd>{amount(s.transfer.amount_received_micros, s.transfer.target_currency ?? s.transfer.source_currency)}</dd>
                  <dt>Fees</dt>
                  <dd>{amount(s.transfer.fee_micros, null)}</dd>
                  <dt>Exchange rate</dt>
                  <dd>{s.transfer.exchange_rate === null ? 'Not provided' : String(s.transfer.exchange_rate)}</dd>
                </dl>
              ) : (
                <p>No transfer yet: money moves only once the statement is approved and paid.</p>
              )}
            </section>
          </div>
        )}
      </ResourceView>
    </>
  );
}
