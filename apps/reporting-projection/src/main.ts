import { loadEnv } from '#libs/config';
import { exitAfterShutdownTimeout } from '#libs/bootstrap';
import { createLogger } from '#libs/observability';
import { ReportingProjectionEnv } from './config/reporting-projection.env.js';
import { createReportingProjectionApp } from './reporting-projection.app.js';

const env = loadEnv(ReportingProjectionEnv);
const logger = createLogger('reporting-projection', env.LOG_LEVEL);
const app = await createReportingProjectionApp(env, logger);
exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
await app.listen(env.REPORTING_HTTP_PORT, env.HOST);
logger.info({ port: env.REPORTING_HTTP_PORT }, 'reporting-projection started');
