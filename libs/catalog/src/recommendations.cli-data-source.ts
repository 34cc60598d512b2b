import { ServerEnv, loadEnv, databaseUrl } from '#libs/config';
import { createRecommendationsDataSource } from './catalog.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- recommendations`): DATABASE_URL from the environment. */
export default createRecommendationsDataSource(databaseUrl(loadEnv(ServerEnv)), 2, 'typeorm-cli');
