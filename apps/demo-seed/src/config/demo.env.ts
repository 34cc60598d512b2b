import { IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { ServerEnv } from '#libs/config';

/** Configuration of `npm run demo`: the services' variables it needs. */
export class DemoEnv extends ServerEnv {
  /** The gateway's port, for the printed curl line and the check that it runs. */
  @IsInt() @Min(0) @Max(65535)
  PORT = 3000;

  /** The gateway's public address, when set (it wins over PORT in the printed URLs). */
  @IsOptional()
  @Matches(/^https?:\/\/[^\s/?#@]+(\/[^\s?#]*)?$/, { message: 'PUBLIC_BASE_URL must be an http(s) URL without credentials, query or fragment' })
  PUBLIC_BASE_URL?: string;

  /**
   * The `producer` user's password (DESIGN §8): with it the demo publishes as `producer`, unless
   * NATS_USER / NATS_CREDS name another identity.
   */
  @IsOptional() @IsString()
  NATS_PASSWORD_PRODUCER?: string;

  /** The catalog the demo imports (as `ops ads import --file` would), relative to the repository. */
  @IsString() @MinLength(1)
  DEMO_CATALOG_FILE = 'catalog/sample-catalog.json';

  /** Where private servers keep their data (shared with `npm start`); the demo keeps its keys in demo/ there. */
  @IsString() @MinLength(1)
  LAUNCHER_DATA_DIR = '.data';
}
