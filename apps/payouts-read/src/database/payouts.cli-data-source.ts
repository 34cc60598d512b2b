import { ServerEnv, loadEnv } from '#libs/config';
import { createPayoutsDataSource } from './payouts.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- payouts`): DATABASE_URL from the environment. */
export default createPayoutsDataSource(loadEnv(ServerEnv).DATABASE_URL, 2);
