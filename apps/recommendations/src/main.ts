import { loadEnv } from '#libs/config';
import { exitAfterShutdownTimeout } from '#libs/bootstrap';
import { createLogger } from '#libs/observability';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { createRecommendationsApp } from './recommendations.app.js';

const env = loadEnv(RecommendationsEnv);
const logger = createLogger('recommendations', env.LOG_LEVEL);
const app = await createRecommendationsApp(env, logger);
exitAfterShutdownTimeout(env.SHUTDOWN_TIMEOUT_MS, logger);
await app.listen(env.RECOMMENDATIONS_HTTP_PORT, env.HOST);
logger.info({ port: env.RECOMMENDATIONS_HTTP_PORT }, 'recommendations started');
