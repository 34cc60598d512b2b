import type { DataSource } from 'typeorm';
import type { InboundMessage } from '#libs/nats';
import { createReportingDataSource } from '../../apps/reporting-projection/src/database/reporting.data-source.js';
import { ProjectionRepository } from '../../apps/reporting-projection/src/ingestion/projection.repository.js';
import { StoragePartitions } from '../../apps/reporting-projection/src/ingestion/storage-partitions.js';
import { ProjectionService } from '../../apps/reporting-projection/src/ingestion/projection.service.js';
import { RollupQueryRepository } from '../../apps/reporting-projection/src/publication/rollup-query.repository.js';
import { SeriesBuilder } from '../../apps/reporting-projection/src/publication/series-builder.service.js';
import { SeriesQueryRepository } from '../../apps/reporting-projection/src/publication/series-query.repository.js';
import { SnapshotBuilder } from '../../apps/reporting-projection/src/publication/snapshot-builder.service.js';
import { useMigratedDatabase } from '../support/index.js';

/**
 * The DST days of DESIGN §7 through the real projection and database: a recommendation shown
 * every 30 minutes through a whole local day, the series published at the next local midnight.
 * The day's daily bucket is 23 or 25 hours long (23.5 and 24.5 on Lord Howe) and counts every
 * recommendation of the day; its hourly buckets are 23 or 25 (Lord Howe: one of 30 minutes) and
 * each counts the recommendations of its minutes; both sum to the report of the same scope.
 */

const CASES = [
  { zone: 'America/New_York', what: 'spring forward', dayStart: '2024-03-10T05:00:00Z', dayEnd: '2024-03-11T04:00:00Z', hours: 23, hourBuckets: 23 },
  { zone: 'America/New_York', what: 'fall back', dayStart: '2024-11-03T04:00:00Z', dayEnd: '2024-11-04T05:00:00Z', hours: 25, hourBuckets: 25 },
  { zone: 'Australia/Lord_Howe', what: 'spring forward 30 min', dayStart: '2024-10-05T13:30:00Z', dayEnd: '2024-10-06T13:00:00Z', hours: 23.5, hourBuckets: 24 },
  { zone: 'Australia/Lord_Howe', what: 'fall back 30 min', dayStart: '2024-04-06T13:00:00Z', dayEnd: '2024-04-07T13:30:00Z', hours: 24.5, hourBuckets: 25 },
];

const HALF_HOUR = 30 * 60_000;
const encoder = new TextEncoder();
const scratch = useMigratedDatabase((url) => createReportingDataSource(url, 4));
let dataSource: DataSource;

beforeAll(() => {
  ({ dataSource } = scratch);
});

it.each(CASES)('$zone $what: a day of $hours hours, $hourBuckets hourly buckets, summing to the report', async ({ zone, dayStart, dayEnd, hours, hourBuckets }) => {
  const agent = `agent_dst_${zone.replace(/\W/g, '_')}_${dayStart.slice(0, 10)}`;
  await dataSource.query(`INSERT INTO reporting.platform_timezone VALUES ($1, $2, now())`, [agent, zone]);
  const start = Date.parse(dayStart);
  const end = Date.parse(dayEnd);
  expect((end - start) / 3_600_000).toBe(hours);
  // One recommendation shown every 30 minutes of the local day, at a quarter past, and one just before the day.
  const created = [start - 60_000];
  for (let t = start + 15 * 60_000; t < end; t += HALF_HOUR) created.push(t);
  const messages: InboundMessage[] = created.map((at, i) => ({
    subject: 'events.recommendation.shown',
    sequence: i + 1,
    deliveries: 1,
    data: encoder.encode(
      JSON.stringify({
        event_id: `evt_${agent}_${i}`,
        recommendation_id: `rec_${agent}_${i}`,
        agent_id: agent,
        traffic: 'live',
        recommendation_created_at: new Date(at).toISOString(),
        occurred_at: new Date(at).toISOString(),
        billable: false,
      }),
    ),
  }));
  const outcomes = await new ProjectionService(new ProjectionRepository(dataSource, new StoragePartitions(dataSource, Date.now, 3650)), 1).applyBatch(messages);
  expect(outcomes.every((o) => o.kind === 'applied')).toBe(true);

  // Published at the next local midnight: the DST day is the last whole day of the 7d series.
  const processedThrough = new Date(end);
  const scopes = [{ agentId: agent, traffic: 'live', timeRange: '7d' as const }];
  const { report, daily, hourly } = await dataSource.transaction('REPEATABLE READ', async (manager) => {
    const [r] = await new SnapshotBuilder(dataSource, new RollupQueryRepository(dataSource)).build(scopes, processedThrough, new Date(), manager);
    const series = new SeriesBuilder(dataSource, new SeriesQueryRepository());
    const [d, h] = await series.build([{ ...scopes[0], granularity: 'day' }, { ...scopes[0], granularity: 'hour' }], processedThrough, new Date(), manager);
    return { report: r, daily: d, hourly: h };
  });
  expect(report.exposures).toBe(created.length);

  const day = daily.buckets[daily.buckets.length - 1];
  expect(day).toEqual({ start_at: new Date(start).toISOString(), end_at: new Date(end).toISOString(), exposures: hours * 2, clicks: 0, engagements: 0, conversions: 0, earnings_micros: 0 });
  expect(daily.buckets[daily.buckets.length - 2].exposures).toBe(1);

  const ofDay = hourly.buckets.filter((b) => Date.parse(b.start_at) >= start);
  expect(ofDay).toHaveLength(hourBuckets);
  for (const bucket of ofDay) {
    const minutes = (Date.parse(bucket.end_at) - Date.parse(bucket.start_at)) / 60_000;
    // Every bucket holds the recommendations created in it: two an hour, one in a half-hour bucket.
    const inside = created.filter((t) => t >= Date.parse(bucket.start_at) && t < Date.parse(bucket.end_at)).length;
    expect({ start: bucket.start_at, minutes, exposures: bucket.exposures }).toEqual({ start: bucket.start_at, minutes: expect.any(Number), exposures: inside });
    expect(minutes === 60 || (minutes === 30 && zone === 'Australia/Lord_Howe')).toBe(true);
  }
  expect(ofDay.filter((b) => Date.parse(b.end_at) - Date.parse(b.start_at) === HALF_HOUR)).toHaveLength(zone === 'Australia/Lord_Howe' ? 1 : 0);

  for (const series of [daily, hourly]) {
    expect(series.buckets.reduce((sum, b) => sum + b.exposures, 0)).toBe(report.exposures);
    expect(series.buckets[0].start_at).toBe(report.start!.toISOString());
    expect(series.buckets[series.buckets.length - 1].end_at).toBe(report.end.toISOString());
  }
});
