import { IsEmpty, IsIn, IsInt, IsString, Matches, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import { IsReadableFile } from './tls-env.js';

/** Settings every service shares: the three servers of DESIGN §2. */
export class ServerEnv {
  /** NATS server(s), comma separated. */
  @Matches(/^(nats|tls|ws|wss):\/\/[^,\s]+(,(nats|tls|ws|wss):\/\/[^,\s]+)*$/, {
    message: 'NATS_URL must be nats:// URLs, comma separated',
  })
  NATS_URL = 'nats://127.0.0.1:4222';

  /**
   * The process's NATS identity (DESIGN §8): a user of deploy/nats/nats-server.conf and its
   * password, or NATS_CREDS, the path of a creds file (JWT + NKey seed). None: anonymous, for
   * a developer's open NATS.
   */
  @ValidateIf((env: ServerEnv) => env.NATS_USER !== undefined || env.NATS_PASSWORD !== undefined)
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'NATS_USER must be set with NATS_PASSWORD: a user name of letters, digits, - and _' })
  NATS_USER?: string;

  @ValidateIf((env: ServerEnv) => env.NATS_USER !== undefined || env.NATS_PASSWORD !== undefined)
  @IsString({ message: 'NATS_PASSWORD must be set with NATS_USER' })
  NATS_PASSWORD?: string;

  @ValidateIf((env: ServerEnv) => env.NATS_CREDS !== undefined && env.NATS_USER !== undefined)
  @IsEmpty({ message: 'NATS_CREDS and NATS_USER are exclusive: set one of them' })
  NATS_CREDS?: string;

  /**
   * Retention of the JetStream streams, applied at start (libs/nats/src/streams.ts): events older
   * than this many days are removed from EVENTS / DEAD_LETTERS. 0 keeps them forever.
   */
  @IsInt() @Min(0) @Max(36500)
  EVENTS_MAX_AGE_DAYS = 365;

  @IsInt() @Min(0) @Max(36500)
  DEAD_LETTERS_MAX_AGE_DAYS = 90;

  /**
   * Copies JetStream keeps of each stream (EVENTS, DEAD_LETTERS, SETTINGS), and so of their
   * consumers: 1 on a single server, 3 on a JetStream cluster of three servers (deploy/k8s prod,
   * the compose profile `cluster`). Applied at start like the retention (libs/nats/src/streams.ts).
   */
  @IsInt() @Min(1) @Max(5)
  NATS_STREAM_REPLICAS = 1;

  /**
   * TLS to NATS (deploy/k8s prod): the CA that signed the servers' certificates; with it the
   * connection is TLS and the server's certificate is verified. NATS_TLS_CERT_FILE and
   * NATS_TLS_KEY_FILE (together) add a client certificate. None: plain connections (local).
   */
  @ValidateIf((env: ServerEnv) => env.NATS_TLS_CA_FILE !== undefined || env.NATS_TLS_CERT_FILE !== undefined)
  @IsReadableFile('NATS_TLS_CERT_FILE')
  NATS_TLS_CA_FILE?: string;

  @ValidateIf((env: ServerEnv) => env.NATS_TLS_CERT_FILE !== undefined || env.NATS_TLS_KEY_FILE !== undefined)
  @IsReadableFile('NATS_TLS_KEY_FILE')
  NATS_TLS_CERT_FILE?: string;

  @ValidateIf((env: ServerEnv) => env.NATS_TLS_CERT_FILE !== undefined || env.NATS_TLS_KEY_FILE !== undefined)
  @IsReadableFile('NATS_TLS_CERT_FILE')
  NATS_TLS_KEY_FILE?: string;

  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/weave';

  /**
   * `verify-full`: TLS to PostgreSQL, the server's certificate checked against
   * DATABASE_SSL_ROOT_CERT (or the system's CAs) and its name against DATABASE_URL's host,
   * whatever sslmode DATABASE_URL carries (databaseUrl). Unset: DATABASE_URL's own sslmode.
   */
  @ValidateIf((env: ServerEnv) => env.DATABASE_SSL_MODE !== undefined || env.DATABASE_SSL_ROOT_CERT !== undefined)
  @IsIn(['verify-full'], { message: 'DATABASE_SSL_MODE must be verify-full (required with DATABASE_SSL_ROOT_CERT), or unset' })
  DATABASE_SSL_MODE?: string;

  /** The CA file PostgreSQL's server certificate must chain to (libpq's sslrootcert). */
  @ValidateIf((env: ServerEnv) => env.DATABASE_SSL_ROOT_CERT !== undefined)
  @IsReadableFile()
  DATABASE_SSL_ROOT_CERT?: string;

  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  /** With a rediss:// REDIS_URL: the CA Redis's certificate must chain to (default: the system's CAs). */
  @ValidateIf((env: ServerEnv) => env.REDIS_TLS_CA_FILE !== undefined)
  @IsReadableFile()
  @ValidateBy({
    name: 'needsRediss',
    validator: { validate: (_value, args) => (args?.object as ServerEnv).REDIS_URL.startsWith('rediss://'), defaultMessage: () => 'REDIS_TLS_CA_FILE needs a rediss:// REDIS_URL (TLS)' },
  })
  REDIS_TLS_CA_FILE?: string;

  @IsString()
  LOG_LEVEL = 'info';

  /**
   * `json`: one JSON object a line (what a log collector reads); `pretty`: one readable line
   * per entry (pino-pretty); `auto`: pretty when stdout is a terminal, JSON otherwise. The
   * container image sets `json`, so a `docker run -t` still logs JSON.
   */
  @IsIn(['auto', 'json', 'pretty'])
  LOG_FORMAT: 'auto' | 'json' | 'pretty' = 'auto';

  /** How long graceful shutdown may take before the process exits anyway. */
  @IsInt()
  @Min(100)
  @Max(60000)
  SHUTDOWN_TIMEOUT_MS = 10000;
}

/** Settings of every long-running service (not the CLIs): where it listens, its PostgreSQL pool. */
export class ServiceEnv extends ServerEnv {
  /** The address of the service's HTTP listener (its port is a variable of its own, DESIGN §2). */
  @IsString()
  HOST = '0.0.0.0';

  @IsInt() @Min(1) @Max(100)
  DATABASE_POOL_SIZE = 10;

  /**
   * How far V8 lets the old generation grow past the live heap before a full collection, in
   * percent (--heap-growing-percent, applied at start by runService; 0: V8's own factor). V8's
   * factor is sized to the host's memory, not the pod's. Under bench:mixed (180 s, 5,000 events/s,
   * ~6,700 reads/s) the gateway's resident set reached 334 MB with it, 247 MB at 50 % and stayed at
   * 168–172 MB at 20 %, for 0.088 ms of CPU per read instead of 0.076 (reads 6,610 against 6,866
   * req/s); reporting-projection's batches, which promote garbage, doubled its heap with V8's
   * factor (246 → 162 MB at 20 %). No heap cap: the heap still grows when the live set does.
   */
  @IsInt() @Min(0) @Max(400)
  HEAP_GROWING_PERCENT = 20;
}

export { natsIdentity, natsServers, type NatsIdentity } from '#libs/connections';

/** The retention of the JetStream streams that ServerEnv asks for (libs/nats ensureStreams). */
export function streamRetention(env: Pick<ServerEnv, 'EVENTS_MAX_AGE_DAYS' | 'DEAD_LETTERS_MAX_AGE_DAYS'>): {
  eventsMaxAgeDays: number;
  deadLettersMaxAgeDays: number;
} {
  return { eventsMaxAgeDays: env.EVENTS_MAX_AGE_DAYS, deadLettersMaxAgeDays: env.DEAD_LETTERS_MAX_AGE_DAYS };
}
