import { ServerEnv, loadEnv, databaseUrl } from '#libs/config';
import { createReportingDataSource } from './reporting.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- reporting`): DATABASE_URL from the environment. */
export default createReportingDataSource(databaseUrl(loadEnv(ServerEnv)), 2);
