import { runService } from '#libs/bootstrap';
import { TimezoneSettingsEnv } from './config/timezone-settings.env.js';
import { createTimezoneSettingsApp } from './timezone-settings.app.js';

await runService({ service: 'timezone-settings', env: TimezoneSettingsEnv, port: (env) => env.TIMEZONE_HTTP_PORT, create: createTimezoneSettingsApp });
