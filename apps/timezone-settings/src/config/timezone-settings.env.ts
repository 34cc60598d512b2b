import { IsInt, IsString, Max, Min } from 'class-validator';
import { ServerEnv } from '#libs/config';

/** Configuration of timezone-settings, validated once at start (DESIGN §2). */
export class TimezoneSettingsEnv extends ServerEnv {
  /** HTTP listener for health and metrics only. */
  @IsInt() @Min(0) @Max(65535)
  TIMEZONE_HTTP_PORT = 3103;

  @IsString()
  HOST = '0.0.0.0';

  @IsInt() @Min(1) @Max(100)
  DATABASE_POOL_SIZE = 5;
}
