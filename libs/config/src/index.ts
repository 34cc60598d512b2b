export { loadEnv, ConfigError } from './load-env.js';
export { ServerEnv, natsServers } from './base-env.js';
