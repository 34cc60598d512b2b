import { createServiceDataSource } from '#libs/database';
import { ReportingInitial1764115200000 } from './migrations/1764115200000-reporting-initial.js';

export const REPORTING_SCHEMA = 'reporting';

export function createReportingDataSource(url: string, poolSize: number) {
  return createServiceDataSource({
    url,
    schema: REPORTING_SCHEMA,
    entities: [],
    migrations: [ReportingInitial1764115200000],
    poolSize,
    applicationName: 'reporting-projection',
  });
}
