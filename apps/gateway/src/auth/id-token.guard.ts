import { Inject, Injectable, SetMetadata, createParamDecorator, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { LOGGER } from '#libs/bootstrap';
import { parseApiKey } from '#libs/identity';
import { rolesOf } from '#libs/oidc-claims';
import type { Logger } from '#libs/observability';
import { GatewayEnv } from '../config/gateway.env.js';
import { ProblemException } from '../http/problem.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { IdentityCacheService } from './identity-cache.service.js';
import { IdTokenVerifier, type IdTokenFailure } from './id-token.verifier.js';

/** Who is calling with an ID token: the owner of exactly one active platform. */
export interface OwnerPrincipal {
  /** The active platform whose owner_uid is the token's `sub`. */
  agent_id: string;
  sub: string;
  /** The role from OIDC_ROLE_CLAIM (the required one when a route requires a role), or null. */
  role: string | null;
}

export const OWNER_PRINCIPAL = Symbol('ownerPrincipal');
export type RequestWithOwner = { [OWNER_PRINCIPAL]?: OwnerPrincipal };

const REQUIRED_ROLE = 'weave:requiredRole';

/** Routes guarded by IdTokenGuard that also need a role claim (e.g. payouts: `agent`). */
export const RequireRole = (role: string) => SetMetadata(REQUIRED_ROLE, role);

/** The principal IdTokenGuard attached to the request. */
export const Owner = createParamDecorator((_data: unknown, context: ExecutionContext): OwnerPrincipal => {
  const principal = context.switchToHttp().getRequest<RequestWithOwner>()[OWNER_PRINCIPAL];
  if (!principal) throw new Error('Owner used on a route without IdTokenGuard');
  return principal;
});

const INVALID = 'The ID token is invalid; sign in again for a new one.';
const TOKEN_FAILURES: Record<Exclude<IdTokenFailure, 'keys_unavailable'>, string> = {
  not_configured: 'ID-token sign-in is not configured on this service; no ID token is accepted.',
  expired: 'The ID token has expired; sign in again for a new one.',
  invalid: INVALID,
};

function bearerToken(header: string | undefined): { ok: true; token: string } | { ok: false; detail: string } {
  if (!header) return { ok: false, detail: 'Send the ID token of the signed-in platform owner as "Authorization: Bearer <ID_TOKEN>".' };
  const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(header);
  if (!match) return { ok: false, detail: 'The Authorization header must be "Authorization: Bearer <ID_TOKEN>".' };
  if (parseApiKey(match[1]) || /^sk_(live|test)_/.test(match[1])) {
    return { ok: false, detail: 'An API key is not accepted here; send the ID token of the signed-in platform owner.' };
  }
  return { ok: true, token: match[1] };
}

/**
 * Authenticates owner routes with an identity-provider ID token (SPEC Authentication):
 * 401 for a missing, non-Bearer, invalid or expired token, an API key, a missing required role,
 * or a `sub` that owns no platform; 403 when the owner's platform is suspended (or when it owns
 * several active platforms: which one is meant cannot be told). Checked against the identity
 * schema on every request, so a suspension is effective at once. Tokens are never logged.
 */
@Injectable()
export class IdTokenGuard implements CanActivate {
  constructor(
    private readonly verifier: IdTokenVerifier,
    private readonly identity: IdentityCacheService,
    private readonly reflector: Reflector,
    private readonly env: GatewayEnv,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly rateLimit: RateLimitService,
  ) {}

  /** Authentication under the rate limits: per subject on success, per client address on failure. */
  canActivate(context: ExecutionContext): Promise<boolean> {
    return this.rateLimit.guard(context, 'id_token', () => this.authenticate(context));
  }

  /** Attaches the owner principal and resolves to the token's `sub` (what the rate limit counts). */
  private async authenticate(context: ExecutionContext): Promise<string> {
    const request = context.switchToHttp().getRequest<FastifyRequest & RequestWithOwner>();
    const challenge = { 'WWW-Authenticate': 'Bearer error="invalid_token"' };
    const bearer = bearerToken(request.headers.authorization);
    if (!bearer.ok) throw new ProblemException('invalid-id-token', bearer.detail, { 'WWW-Authenticate': 'Bearer' });

    const verified = await this.verifier.verify(bearer.token);
    if (!verified.ok) {
      if (verified.reason === 'keys_unavailable') {
        throw new ProblemException('service-unavailable', 'Authentication is temporarily unavailable; retry later.', { 'Retry-After': '5' });
      }
      throw new ProblemException('invalid-id-token', TOKEN_FAILURES[verified.reason], challenge);
    }
    const { claims } = verified;

    const required = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_ROLE, [context.getHandler(), context.getClass()]);
    const roles = rolesOf(claims, this.env.OIDC_ROLE_CLAIM);
    if (required && !roles.includes(required)) {
      throw new ProblemException('invalid-id-token', `The ID token does not carry the ${required} role; sign in with an account that has the ${required} role.`, challenge);
    }

    let platforms: { agent_id: string; status: string }[];
    try {
      platforms = await this.identity.platformsOwnedBy(claims.sub);
    } catch (error) {
      this.logger.error({ err: (error as Error).message, requestId: request.id }, 'platform owner lookup failed');
      throw new ProblemException('service-unavailable', 'Authentication is temporarily unavailable; retry later.', { 'Retry-After': '5' });
    }
    if (platforms.length === 0) {
      throw new ProblemException('invalid-id-token', 'This account does not own a platform; sign in as the platform owner.', challenge);
    }
    const active = platforms.filter((p) => p.status === 'active');
    if (active.length !== 1) {
      if (active.length > 1) this.logger.warn({ requestId: request.id, platforms: active.length }, 'owner of several active platforms refused');
      throw new ProblemException('account-unavailable', 'The platform account is unavailable; contact support.');
    }
    request[OWNER_PRINCIPAL] = { agent_id: active[0].agent_id, sub: claims.sub, role: required ?? roles[0] ?? null };
    return claims.sub;
  }
}
