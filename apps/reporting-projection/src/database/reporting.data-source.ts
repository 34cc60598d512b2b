import { createServiceDataSource } from '#libs/database';
import { ReportingInitial1764115200000 } from './migrations/1764115200000-reporting-initial.js';
import { ReportingSeries1795740000001 } from './migrations/1795740000001-reporting-series.js';
import { ReportingPartitioned1795800000000 } from './migrations/1795800000000-reporting-partitioned.js';
import { ReportingQuarterRollups1795910000000 } from './migrations/1795910000000-reporting-quarter-rollups.js';
import { ReportingBreakdowns1795920000000 } from './migrations/1795920000000-reporting-breakdowns.js';
import { ReportingBreakdownPairs1795930000000 } from './migrations/1795930000000-reporting-breakdown-pairs.js';
import { ReportingBreakdownArchive1795940000000 } from './migrations/1795940000000-reporting-breakdown-archive.js';

export const REPORTING_SCHEMA = 'reporting';

export function createReportingDataSource(url: string, poolSize: number) {
  return createServiceDataSource({
    url,
    schema: REPORTING_SCHEMA,
    entities: [],
    migrations: [ReportingInitial1764115200000, ReportingSeries1795740000001, ReportingPartitioned1795800000000, ReportingQuarterRollups1795910000000, ReportingBreakdowns1795920000000, ReportingBreakdownPairs1795930000000, ReportingBreakdownArchive1795940000000],
    poolSize,
    applicationName: 'reporting-projection',
  });
}
