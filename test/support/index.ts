export * from './servers.js';
export * from './logger.js';
