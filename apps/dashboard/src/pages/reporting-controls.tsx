import type { ReactNode } from 'react';
import { TIME_RANGES, type TimeRange, type Traffic } from '../routing/routes.js';
import { RANGE_LABELS } from './reporting-labels.js';

/** The live/test switch of the reporting pages. */
export function TrafficSwitch({ traffic, onChange }: { traffic: Traffic; onChange: (traffic: Traffic) => void }) {
  return (
    <fieldset className="switch">
      <legend>Traffic</legend>
      {(['live', 'test'] as Traffic[]).map((option) => (
        <label key={option}>
          <input type="radio" name="traffic" value={option} checked={traffic === option} onChange={() => onChange(option)} />
          {option === 'live' ? 'Live traffic (live keys)' : 'Test traffic (test keys)'}
        </label>
      ))}
    </fieldset>
  );
}

/** A section's h2 with the button that reloads what the section shows. */
export function RefreshableHeading({ id, children, onRefresh }: { id: string; children: ReactNode; onRefresh: () => void }) {
  return (
    <div className="section-head">
      <h2 id={id}>{children}</h2>
      <button type="button" className="secondary" onClick={onRefresh}>
        Refresh
      </button>
    </div>
  );
}

/** The period select of the reporting pages. */
export function RangeSelect({ range, onChange }: { range: TimeRange; onChange: (range: TimeRange) => void }) {
  return (
    <label>
      Range
      <select value={range} onChange={(event) => onChange(event.target.value as TimeRange)}>
        {TIME_RANGES.map((option) => (
          <option key={option} value={option}>
            {RANGE_LABELS[option]}
          </option>
        ))}
      </select>
    </label>
  );
}
