import { IsInt, Max, Min } from 'class-validator';
import { ServiceEnv } from '#libs/config';

/** Configuration of timezone-settings, validated once at start (DESIGN §2). */
export class TimezoneSettingsEnv extends ServiceEnv {
  /** HTTP listener for health and metrics only. */
  @IsInt() @Min(0) @Max(65535)
  TIMEZONE_HTTP_PORT = 3103;

  DATABASE_POOL_SIZE = 5;
}
