import { IsInt, IsString, Matches, Max, Min } from 'class-validator';

/** Settings every service shares: the three servers of DESIGN §2. */
export class ServerEnv {
  /** NATS server(s), comma separated. */
  @Matches(/^(nats|tls|ws|wss):\/\/[^,\s]+(,(nats|tls|ws|wss):\/\/[^,\s]+)*$/, {
    message: 'NATS_URL must be nats:// URLs, comma separated',
  })
  NATS_URL = 'nats://127.0.0.1:4222';

  @Matches(/^postgres(ql)?:\/\/\S+$/, { message: 'DATABASE_URL must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/weave';

  @Matches(/^rediss?:\/\/\S+$/, { message: 'REDIS_URL must be a redis:// URL' })
  REDIS_URL = 'redis://127.0.0.1:6379';

  @IsString()
  LOG_LEVEL = 'info';

  /** How long graceful shutdown may take before the process exits anyway. */
  @IsInt()
  @Min(100)
  @Max(60000)
  SHUTDOWN_TIMEOUT_MS = 10000;
}

export function natsServers(url: string): string[] {
  return url.split(',').map((s) => s.trim()).filter(Boolean);
}
