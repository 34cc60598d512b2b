export { loadEnv, ConfigError, type InvalidSetting } from './load-env.js';
export { ServerEnv, ServiceEnv, natsServers, natsIdentity, streamRetention, type NatsIdentity } from './base-env.js';
export { IsCidrList, cidrList, isCidr } from './cidr-list.js';
export { IsReadableFile, isReadableFile, natsTls, databaseUrl, redisTls, type NatsTls } from './tls-env.js';
