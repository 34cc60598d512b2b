import { ServerEnv, loadEnv } from '#libs/config';
import { createReportingDataSource } from './reporting.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- reporting`): DATABASE_URL from the environment. */
export default createReportingDataSource(loadEnv(ServerEnv).DATABASE_URL, 2);
