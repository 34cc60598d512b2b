export { SERVER_LABELS, SERVER_URL_VARIABLES, isLoopback, serverAddress, type ServerAddress, type ServerKind } from './urls.js';
export { PROBES, probeNats, probePostgres, probeRedis, type ProbeResult } from './probes.js';
export { findOnPath, findPostgresBinaries, findProgram, type PostgresBinaries } from './programs.js';
export { INSTALL_HINTS } from './install-hints.js';
export { ServerProcess, type ServerProcessOptions } from './server-process.js';
export { NatsServer, type NatsServerOptions } from './nats-server.js';
export { RedisServer, type RedisServerOptions } from './redis-server.js';
export { PostgresCluster, type PostgresClusterOptions, type PostgresStopMode } from './postgres-cluster.js';
export { describeServerOutcome, privateNatsSettings, provideLocalServers, type LocalServers, type LocalServersOptions, type ServerOutcome } from './local-servers.js';
