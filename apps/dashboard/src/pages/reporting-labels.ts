import type { Granularity, TimeRange } from '../routing/routes.js';

export const RANGE_LABELS: Record<TimeRange, string> = {
  today: 'Today',
  '1d': 'Last 24 hours',
  '7d': 'Last 7 days',
  '30d': 'Last 30 days',
  '90d': 'Last 90 days',
  all: 'All time',
};

export const GRANULARITY_LABELS: Record<Granularity, string> = { hour: 'Hourly', day: 'Daily' };

export const STATUS_LABELS: Record<string, string> = { ready: 'Ready', stale: 'Stale', preparing: 'Being prepared' };

export const COVERAGE_LABELS: Record<string, string> = {
  complete: 'Complete',
  partial: 'Partial',
  unavailable: 'Unavailable',
};

/** The five figures of a report and of each bucket, in the order the page shows them. */
export const FIGURES = [
  { key: 'exposures', label: 'Exposures' },
  { key: 'clicks', label: 'Clicks' },
  { key: 'engagements', label: 'Engagements' },
  { key: 'conversions', label: 'Conversions' },
] as const;
