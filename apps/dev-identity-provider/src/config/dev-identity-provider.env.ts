import { IsInt, IsOptional, IsString, Max, Min, MinLength, ValidateBy } from 'class-validator';
import type { DevAccount } from '../dev-identity-provider.js';

/** Reads DEV_IDP_ACCOUNTS: a JSON array of accounts; throws with the reason. */
export function parseDevAccounts(text: string): DevAccount[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('is not JSON');
  }
  if (!Array.isArray(parsed)) throw new Error('must be a JSON array of accounts');
  return parsed.map((entry: unknown, index) => {
    const account = entry as Record<string, unknown>;
    if (!account || typeof account !== 'object' || Array.isArray(account)) throw new Error(`entry ${index} must be an object`);
    const unknown = Object.keys(account).filter((key) => !['username', 'password', 'sub', 'role', 'name'].includes(key));
    if (unknown.length > 0) throw new Error(`entry ${index} has unknown field(s) ${unknown.join(', ')}`);
    for (const field of ['username', 'sub'] as const) {
      if (typeof account[field] !== 'string' || account[field] === '') throw new Error(`entry ${index} needs a non-empty string ${field}`);
    }
    for (const field of ['password', 'name'] as const) {
      if (account[field] !== undefined && (typeof account[field] !== 'string' || account[field] === '')) throw new Error(`entry ${index}: ${field} must be a non-empty string`);
    }
    if (account.role !== undefined && account.role !== null && typeof account.role !== 'string') throw new Error(`entry ${index}: role must be a string or null`);
    return account as unknown as DevAccount;
  });
}

/**
 * Settings of the development identity provider, which `npm start` runs when no OIDC settings
 * are given (DESIGN §2) and `npm run start:dev-identity-provider` runs on its own.
 */
export class DevIdentityProviderEnv {
  /** Its port on 127.0.0.1 (the issuer `http://127.0.0.1:<port>`); when it is taken, `npm start` takes a free one. */
  @IsInt() @Min(0) @Max(65535)
  DEV_IDP_PORT = 3900;

  /** The demo owner's password; unset: a new random one at every start (printed). */
  @IsOptional() @IsString() @MinLength(8)
  DEV_IDP_PASSWORD?: string;

  /**
   * More people who can sign in, as a JSON array of `{ "username", "sub", "password"?,
   * "role"?, "name"? }` (role absent or null: no role claim, so no payouts pages). A person sees
   * a platform when its owner_uid is their `sub` (`npm run ops -- platform create`).
   */
  @IsOptional()
  @ValidateBy({
    name: 'devAccounts',
    validator: {
      validate: (value: unknown) => {
        try {
          parseDevAccounts(String(value));
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: (args) => {
        try {
          parseDevAccounts(String(args?.value));
          return '';
        } catch (error) {
          return `DEV_IDP_ACCOUNTS ${(error as Error).message}`;
        }
      },
    },
  })
  DEV_IDP_ACCOUNTS?: string;

  /**
   * Origin(s) of the gateway serving the dashboard, comma separated, for the provider on its
   * own (`npm start` passes the gateway it starts).
   */
  @IsString() @MinLength(1)
  DEV_IDP_DASHBOARD_ORIGIN = 'http://127.0.0.1:3000';
}
