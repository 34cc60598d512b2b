import { createHash } from 'node:crypto';
import { counter, type Logger } from '#libs/observability';
import type { GatewayEnv } from '../config/gateway.env.js';
import { FailOpenRedis, type FailOpenRedisOptions } from './fail-open-redis.js';
import type { LeaseAnswer, LeaseStore } from './lease-book.js';
import { CONSUME_SCRIPT, FAILURE_SCRIPT, RETURN_SCRIPT } from './rate-limit.scripts.js';

export const RATE_LIMIT_WINDOW_MS = 60_000;

/** Which credential authenticated the request: each kind has its own limit. */
export type PrincipalKind = 'api_key' | 'id_token';

const failOpens = counter(
  'weave_rate_limit_fail_open_total',
  'Requests let through without a rate-limit check because Redis did not answer (the limiter fails open)',
);

/**
 * The rows of one deployment in a shared Redis: a hash of the identity database's location
 * (never its credentials). Principals (key ids, owner subjects) are defined by that database,
 * so gateways of one deployment share limits and two deployments on one Redis never mix.
 */
export function rateLimitNamespace(databaseUrl: string): string {
  let location = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    location = `${url.hostname}:${url.port}${url.pathname}`;
  } catch {
    // Not parseable as a URL: the whole string, hashed below (never stored or logged).
  }
  return createHash('sha256').update(location).digest('base64url').slice(0, 12);
}

/**
 * The prefix of a deployment's keys in Redis: `weave:` (the only keys the ACL user may touch)
 * and the namespace in braces (a Redis Cluster hash tag: a script's keys share one slot).
 */
export function redisKeyPrefix(area: string, databaseUrl: string): string {
  return `weave:${area}:{${rateLimitNamespace(databaseUrl)}}`;
}

/**
 * A fail-open connection to the gateway's Redis (REDIS_URL, REDIS_TLS_CA_FILE, checks bounded by
 * RATE_LIMIT_REDIS_TIMEOUT_MS), and the prefix of `area`'s keys in it: the rate limiter's, the
 * tracking checks'.
 */
export function gatewayRedis<Commands extends object>(
  env: GatewayEnv,
  area: string,
  options: Omit<FailOpenRedisOptions, 'url' | 'tlsCaFile' | 'timeoutMs'>,
): { redis: FailOpenRedis<Commands>; prefix: string } {
  const prefix = redisKeyPrefix(area, env.DATABASE_URL);
  return { redis: new FailOpenRedis<Commands>({ url: env.REDIS_URL, tlsCaFile: env.REDIS_TLS_CA_FILE, timeoutMs: env.RATE_LIMIT_REDIS_TIMEOUT_MS, ...options }), prefix };
}

/** What CONSUME_SCRIPT answers: code, remaining, retry_ms, reset_ms, granted. */
type ConsumeResult = [number, number, number, number, number];

interface LimiterCommands {
  rateLimitConsume(principalKey: string, limit: number, windowMs: number, wanted: number): Promise<ConsumeResult>;
  rateLimitFailure(failureKey: string, failureLimit: number, windowMs: number): Promise<[number, number]>;
  rateLimitReturn(principalKey: string, limit: number, windowMs: number, returned: number): Promise<number>;
}

/**
 * The limiter's buckets in Redis, shared by every gateway replica: principals' buckets (taken
 * a lease at a time, unused tokens given back) and client addresses' failure buckets, one
 * script round trip each (rate-limit.scripts.ts). Redis unavailable: every call answers
 * undefined and the check is skipped (FailOpenRedis: counted in weave_rate_limit_fail_open_total).
 *
 * Keys: `weave:ratelimit:{<deployment>}:key:<key id>`, `…:sub:<sha256 of sub>`,
 * `…:fail:<client address key>` (client-address.ts).
 */
export class RateLimitStore implements LeaseStore {
  private readonly redis: FailOpenRedis<LimiterCommands>;
  private readonly prefix: string;

  constructor(env: GatewayEnv, logger: Logger, lazy: boolean) {
    ({ redis: this.redis, prefix: this.prefix } = gatewayRedis<LimiterCommands>(env, 'ratelimit', {
      name: 'gateway-rate-limit',
      lazy,
      scripts: {
        rateLimitConsume: { numberOfKeys: 1, lua: CONSUME_SCRIPT },
        rateLimitFailure: { numberOfKeys: 1, lua: FAILURE_SCRIPT },
        rateLimitReturn: { numberOfKeys: 1, lua: RETURN_SCRIPT },
      },
      logger,
      countFailOpen: () => failOpens.inc(),
      warning: 'rate limiter: Redis unavailable, requests pass unlimited',
    }));
  }

  ready(ms: number): Promise<boolean> {
    return this.redis.ready(ms);
  }

  close(): Promise<void> {
    return this.redis.close();
  }

  principalKey(kind: PrincipalKind, principal: string): string {
    // Key ids are short and not secret; subjects are hashed (any length, any characters).
    return kind === 'api_key' ? `${this.prefix}:key:${principal}` : `${this.prefix}:sub:${createHash('sha256').update(principal).digest('base64url')}`;
  }

  async take(key: string, limit: number, wanted: number): Promise<LeaseAnswer | undefined> {
    const result = await this.redis.run((redis) => redis.rateLimitConsume(key, limit, RATE_LIMIT_WINDOW_MS, wanted));
    if (!result) return undefined;
    const [code, remaining, retryMs, resetMs, granted] = result;
    return code === 0 ? { allowed: true, granted, remaining, resetMs } : { allowed: false, retryMs, resetMs };
  }

  giveBack(key: string, limit: number, tokens: number): void {
    void this.redis.run((redis) => redis.rateLimitReturn(key, limit, RATE_LIMIT_WINDOW_MS, tokens), false);
  }

  /**
   * Counts a failed authentication of the client `addressKey` (of `limit` a window): `counted`
   * false when it was already blocked (a blocked address does not extend its own block),
   * `blockedMs` how long it is refused from now on (0: it is not). Undefined: Redis did not answer.
   */
  async failure(addressKey: string, limit: number): Promise<{ counted: boolean; blockedMs: number } | undefined> {
    const result = await this.redis.run((redis) => redis.rateLimitFailure(`${this.prefix}:fail:${addressKey}`, limit, RATE_LIMIT_WINDOW_MS));
    return result && { counted: result[0] === 0, blockedMs: result[1] };
  }
}
