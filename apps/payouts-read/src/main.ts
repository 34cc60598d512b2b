import { loadEnv } from '#libs/config';
import { exitAfterShutdownTimeout } from '#libs/bootstrap';
import { createLogger } from '#libs/observability';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsReadApp } from './payouts-read.app.js';

const env = loadEnv(PayoutsReadEnv);
const logger = createLogger('payouts-read', env.LOG_LEVEL);
const app = await createPayoutsReadApp(env, logger);
exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
await app.listen(env.PAYOUTS_HTTP_PORT, env.HOST);
logger.info({ port: env.PAYOUTS_HTTP_PORT }, 'payouts-read started');
