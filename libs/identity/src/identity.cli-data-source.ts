import { ServerEnv, loadEnv, databaseUrl } from '#libs/config';
import { createIdentityDataSource } from './identity.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- identity`): DATABASE_URL from the environment. */
export default createIdentityDataSource(databaseUrl(loadEnv(ServerEnv)), 2, 'typeorm-cli');
