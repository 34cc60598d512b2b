import { runService } from '#libs/bootstrap';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingProjectionApp } from './reporting-projection.app.js';

await runService({ service: 'reporting-projection', env: ReportingProjectionEnv, port: (env) => env.REPORTING_HTTP_PORT, create: createReportingProjectionApp });
