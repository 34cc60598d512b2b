import { loadEnv } from '#libs/config';
import { exitAfterShutdownTimeout } from '#libs/bootstrap';
import { createLogger } from '#libs/observability';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsApp } from './timezone-settings.app.js';

const env = loadEnv(TimezoneSettingsEnv);
const logger = createLogger('timezone-settings', env.LOG_LEVEL);
const app = await createTimezoneSettingsApp(env, logger);
exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
await app.listen(env.TIMEZONE_HTTP_PORT, env.HOST);
logger.info({ port: env.TIMEZONE_HTTP_PORT }, 'timezone-settings started');
