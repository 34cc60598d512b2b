import { ServerEnv, loadEnv, databaseUrl } from '#libs/config';
import { createPayoutsDataSource } from './payouts.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- payouts`): DATABASE_URL from the environment. */
export default createPayoutsDataSource(databaseUrl(loadEnv(ServerEnv)), 2);
