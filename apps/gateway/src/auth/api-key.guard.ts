import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import { parseBearer, type BearerFailure } from '#libs/identity';
import type { Logger } from '#libs/observability';
import { ProblemException } from '../http/problem.js';
import type { LookupGate } from '../rate-limit/auth-failures.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { IdentityCacheService } from './identity-cache.service.js';
import { KeyUsageService } from './key-usage.service.js';
import { PRINCIPAL, type RequestWithPrincipal } from './principal.js';

/** What the caller reads in the 401 detail; never echoes the credential. */
const BEARER_FAILURES: Record<BearerFailure, string> = {
  missing: 'Send the platform API key as "Authorization: Bearer <API_KEY>".',
  not_bearer: 'The Authorization header must use the Bearer scheme: "Authorization: Bearer <API_KEY>".',
  empty: 'The Bearer credential is empty; send the platform API key.',
  id_token: 'An ID token is not accepted here; use the platform API key.',
  malformed: 'The credential is not a platform API key (sk_live_… or sk_test_…).',
};
const UNKNOWN_KEY = 'The API key is invalid or has been revoked.';

/**
 * Authenticates platform routes with the API key (SPEC Authentication). 401 for a missing,
 * non-Bearer, empty, malformed, unknown or revoked credential and for an ID token; 403 when
 * the key's platform is suspended. On success the principal (agent_id, traffic from the key
 * mode, key_id) is attached to the request. The key is never logged.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly identity: IdentityCacheService,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly rateLimit: RateLimitService,
    private readonly usage: KeyUsageService,
  ) {}

  /**
   * Authentication under the rate limits: per key on success, per client address on failure
   * (the key is checked first: a valid key is served whatever else its address sent).
   * A request the limits let through is a use of the key (`last_used_at`, written in batches).
   */
  async canActivate(context: ExecutionContext): Promise<boolean> {
    let use: { keyId: string; secret: string } | undefined;
    await this.rateLimit.guard(context, 'api_key', async (gate) => {
      use = await this.authenticate(context, gate);
      return use.keyId;
    });
    this.usage.record(use!.keyId, use!.secret);
    return true;
  }

  /**
   * Attaches the principal; resolves to the key id (what the rate limit counts) and the secret
   * (for its last four characters). `gate`: what the key's database lookup goes through (the
   * client address is blocked for failed authentications).
   */
  private async authenticate(context: ExecutionContext, gate: LookupGate | undefined): Promise<{ keyId: string; secret: string }> {
    const request = context.switchToHttp().getRequest<FastifyRequest & RequestWithPrincipal>();
    const bearer = parseBearer(request.headers.authorization);
    if (!bearer.ok) throw new ProblemException('invalid-api-key', BEARER_FAILURES[bearer.reason], { 'WWW-Authenticate': 'Bearer' });

    let key;
    try {
      key = await this.identity.lookup(bearer.apiKey, gate);
    } catch (error) {
      this.logger.error({ err: (error as Error).message, requestId: request.id }, 'API-key lookup failed');
      throw new ProblemException('service-unavailable', 'Authentication is temporarily unavailable; retry later.', { 'Retry-After': '5' });
    }
    if (!key) {
      throw new ProblemException('invalid-api-key', UNKNOWN_KEY, { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
    }
    if (key.platform_status !== 'active') {
      throw new ProblemException('account-unavailable', 'The platform account is unavailable; contact support.');
    }
    request[PRINCIPAL] = { agent_id: key.agent_id, traffic: key.mode, key_id: key.key_id };
    return { keyId: key.key_id, secret: bearer.apiKey };
  }
}
