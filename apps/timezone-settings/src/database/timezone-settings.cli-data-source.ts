import { ServerEnv, loadEnv } from '#libs/config';
import { createTimezoneSettingsDataSource } from './timezone-settings.data-source.js';

/** For the TypeORM CLI only (`npm run migration:run -- timezone_settings`): DATABASE_URL from the environment. */
export default createTimezoneSettingsDataSource(loadEnv(ServerEnv).DATABASE_URL, 2, 'typeorm-cli');
