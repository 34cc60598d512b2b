import { ServerEnv, loadEnv } from '#libs/config';
import { createIdentityDataSource } from './identity.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- identity`): DATABASE_URL from the environment. */
export default createIdentityDataSource(loadEnv(ServerEnv).DATABASE_URL, 2, 'typeorm-cli');
