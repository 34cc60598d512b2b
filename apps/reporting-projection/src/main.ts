import { setFlagsFromString } from 'node:v8';
import { runService } from '#libs/bootstrap';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingProjectionApp } from './reporting-projection.app.js';

await runService({
  service: 'reporting-projection',
  env: ReportingProjectionEnv,
  port: (env) => env.REPORTING_HTTP_PORT,
  create: (env, logger) => {
    // V8 reads this flag at every full collection, so setting it at start takes effect (a heap size would not).
    if (env.HEAP_GROWING_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${env.HEAP_GROWING_PERCENT}`);
    return createReportingProjectionApp(env, logger);
  },
});
