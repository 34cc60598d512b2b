/**
 * What a service and the local-server launcher both say about a connection to NATS, PostgreSQL
 * or Redis: why it failed, in one phrase, and its URL fit for a log line. Production start-up
 * (libs/bootstrap) reaches these here, never through libs/servers (the development and test
 * spawner of those servers).
 */
export { describeConnectionError, isAuthorizationError, isConnectionRefused } from './connection-errors.js';
export { redactUrl } from './redact-url.js';
export { databaseUrl, isReadableFile, natsIdentity, natsServers, natsTls, type NatsIdentity, type NatsTls } from './connection-settings.js';
