export * from './servers.js';
export * from './logger.js';
export * from './apps.js';
export * from './events.js';
export * from './private-servers.js';
export * from './payout-events.js';
export * from './nats-users.js';
export * from './fuzz-seed.js';
