import { loadEnv } from '#libs/config';
import { exitAfterShutdownTimeout } from '#libs/bootstrap';
import { createLogger } from '#libs/observability';
import { GatewayEnv } from './config/gateway.env.js';
import { createGatewayApp } from './gateway.app.js';

const env = loadEnv(GatewayEnv);
const logger = createLogger('gateway', env.LOG_LEVEL);
const app = await createGatewayApp(env, logger);
exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
await app.listen(env.PORT, env.HOST);
logger.info({ port: env.PORT }, 'gateway started');
