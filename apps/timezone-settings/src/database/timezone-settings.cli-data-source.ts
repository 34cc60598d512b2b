import { ServerEnv, loadEnv, databaseUrl } from '#libs/config';
import { createTimezoneSettingsDataSource } from './timezone-settings.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- timezone_settings`): DATABASE_URL from the environment. */
export default createTimezoneSettingsDataSource(databaseUrl(loadEnv(ServerEnv)), 2, 'typeorm-cli');
