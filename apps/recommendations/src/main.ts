import { runService } from '#libs/bootstrap';
import { RecommendationsEnv } from './config/recommendations.env.js';
import { createRecommendationsApp } from './recommendations.app.js';

await runService({ service: 'recommendations', env: RecommendationsEnv, port: (env) => env.RECOMMENDATIONS_HTTP_PORT, create: createRecommendationsApp });
