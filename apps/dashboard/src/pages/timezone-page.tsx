import { useEffect, useId, useMemo, useState, type FormEvent } from 'react';
import type { OnboardingUpdate, Report } from '../api/types.js';
import { PageHeading } from '../components/page-heading.js';
import { ResourceView } from '../components/resource-view.js';
import { useServices } from '../components/services.js';
import { formatInstant, todayInZone } from '../format/time.js';
import { problemMessage } from '../api/outcome.js';
import { useResource } from '../state/use-resource.js';
import { knownZones, searchZones } from '../timezones/zone-search.js';

const BROWSER_ZONES: readonly string[] = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];

/** Re-renders every minute, so "today" rolls over while the page is open. */
function useMinuteClock(): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), 60_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

export function TimezonePage() {
  const { api } = useServices();
  const [saved, setSaved] = useState<OnboardingUpdate | null>(null);
  // The current zone is the one of the latest live `today` report (there is no GET of the setting).
  const { state, reload } = useResource<Report>(`today:${saved?.updated_at ?? ''}`, (signal) =>
    api.request<Report>('/agent/dashboard/reporting', { query: { time_range: 'today', traffic: 'live' }, signal }),
  );
  const current = saved?.reporting_timezone ?? (state.phase === 'ready' ? state.data.timezone : undefined);

  return (
    <>
      <PageHeading title="Reporting timezone">Reporting timezone</PageHeading>
      <p>
        The reporting timezone decides when <em>today</em> starts for your reports, and where the daily and hourly buckets of the
        charts begin. A change appears in the next completed report.
      </p>
      <section aria-labelledby="current-heading">
        <h2 id="current-heading">Current setting</h2>
        {saved ? (
          <p data-testid="current-timezone">
            <strong>{saved.reporting_timezone}</strong> (saved {formatInstant(saved.updated_at, saved.reporting_timezone)}).
          </p>
        ) : (
          <ResourceView state={state} reload={reload} what="the current timezone">
            {(report) => (
              <p data-testid="current-timezone">
                <strong>{report.timezone}</strong>: today&apos;s report started at{' '}
                {report.start_at ? <time dateTime={report.start_at}>{formatInstant(report.start_at, report.timezone)}</time> : 'the first activity'}.
              </p>
            )}
          </ResourceView>
        )}
      </section>
      <ZonePicker current={current} onSaved={setSaved} />
    </>
  );
}

function ZonePicker({ current, onSaved }: { current: string | undefined; onSaved: (update: OnboardingUpdate) => void }) {
  const { api } = useServices();
  const now = useMinuteClock();
  const [query, setQuery] = useState('');
  const [chosen, setChosen] = useState<string | undefined>(undefined);
  const [message, setMessage] = useState<{ kind: 'ok' | 'error'; text: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const zones = useMemo(() => knownZones(BROWSER_ZONES, [current]), [current]);
  const matches = useMemo(() => searchZones(zones, query), [zones, query]);
  const selected = chosen ?? current ?? 'UTC';
  const today = useMemo(() => todayInZone(now, selected), [now, selected]);
  const listId = useId();
  const countId = useId();

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setSaving(true);
    setMessage(null);
    try {
      const outcome = await api.request<OnboardingUpdate>('/agent/update-onboarding', { method: 'PATCH', body: { reporting_timezone: selected } });
      if (outcome.kind === 'ok') {
        onSaved(outcome.data);
        setMessage({ kind: 'ok', text: `Saved: the reporting timezone is now ${outcome.data.reporting_timezone}. The next completed report uses it.` });
      } else if (outcome.kind === 'unavailable' || outcome.kind === 'network') {
        setMessage({ kind: 'error', text: 'The setting could not be saved right now (service temporarily unavailable). Please try again.' });
      } else if (outcome.kind === 'problem') {
        setMessage({ kind: 'error', text: `Not saved: ${problemMessage(outcome.problem)}` });
      }
    } finally {
      setSaving(false);
    }
  };

  return (
    <section aria-labelledby="change-heading">
      <h2 id="change-heading">Change it</h2>
      <form onSubmit={(event) => void save(event)} className="zone-form">
        <label htmlFor="zone-search">Search time zones</label>
        <input
          id="zone-search"
          type="search"
          value={query}
          onChange={(event) => setQuery(event.target.value)}
          placeholder="e.g. Kathmandu, New York, UTC"
          aria-describedby={countId}
          autoComplete="off"
        />
        <p id={countId} className="hint" aria-live="polite">
          {matches.length} matching zone{matches.length === 1 ? '' : 's'}
        </p>
        <label htmlFor={listId}>Time zone</label>
        <select id={listId} size={10} value={matches.includes(selected) ? selected : ''} onChange={(event) => setChosen(event.target.value)}>
          {matches.map((zone) => (
            <option key={zone} value={zone}>
              {zone}
              {zone === current ? ' (current)' : ''}
            </option>
          ))}
        </select>
        <div className="today-preview" data-testid="today-preview" data-zone={selected} data-start={today.start.toISOString()}>
          <p>
            In <strong>{selected}</strong>, today is {today.dateLabel}. It started at <strong>{today.localStartLabel}</strong> local time
            (UTC offset {today.offsetLabel}), which is <time dateTime={today.start.toISOString()}>{today.utcStartLabel}</time>
            {today.hours !== 24 ? `, and it lasts ${today.hours} hours (a daylight-saving change)` : ''}.
          </p>
        </div>
        <button type="submit" disabled={saving || selected === current}>
          {selected === current ? `${selected} is the current setting` : `Use ${selected}`}
        </button>
        <p role="status" className={message?.kind === 'error' ? 'message-error' : 'message-ok'}>
          {message?.text ?? ''}
        </p>
      </form>
    </section>
  );
}
