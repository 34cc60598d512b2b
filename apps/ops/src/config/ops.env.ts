import { IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import { ServerEnv } from '#libs/config';

/**
 * Configuration of the ops CLI: the same variables as the services (DESIGN §3 "same env as
 * the services"); it uses DATABASE_URL and NATS_URL.
 */
export class OpsEnv extends ServerEnv {
  /** How long the CLI tries to reach NATS to announce a change before giving up with a warning. */
  @IsInt() @Min(100) @Max(60000)
  OPS_NATS_TIMEOUT_MS = 2000;

  /**
   * The `ops` user's password, the variable `npm start` takes for every identity (DESIGN §8):
   * with it the CLI connects as `ops` unless NATS_USER / NATS_CREDS name another identity.
   */
  @IsOptional() @IsString()
  NATS_PASSWORD_OPS?: string;
}

export { opsNatsIdentity } from './ops-nats-identity.js';
