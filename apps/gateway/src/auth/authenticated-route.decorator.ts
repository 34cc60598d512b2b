import { UseGuards, applyDecorators } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { API_KEY_SECURITY, ID_TOKEN_SECURITY } from '../docs/api-docs.js';
import { problemExample, problemResponse } from '../docs/problem-responses.js';
import type { ProblemDetails } from '../http/problem.js';
import { RawInputGuard } from '../http/raw-input.guard.js';
import { ApiKeyGuard } from './api-key.guard.js';
import { IdTokenGuard, RequireRole } from './id-token.guard.js';

const FORBIDDEN = ApiForbiddenResponse(
  problemResponse('The platform account is unavailable (e.g. suspended). Contact support.', {
    unavailable: { summary: 'Suspended platform', value: problemExample('account-unavailable', 'The platform account is unavailable; contact support.') },
  }),
);

/**
 * A route of the calling platform (API key): authentication under the rate limits (401, 403),
 * then RawInputGuard, in one guard list so that they run in this order; with their OpenAPI
 * security scheme and 401/403 answers.
 */
export function ApiKeyRoute(): MethodDecorator {
  return applyDecorators(
    UseGuards(ApiKeyGuard, RawInputGuard),
    ApiBearerAuth(API_KEY_SECURITY),
    ApiUnauthorizedResponse(
      problemResponse(
        'The API key is missing, not sent as a Bearer credential, malformed, unknown or revoked, or an ID token was sent. Fix the key and header.',
        {
          missing: { summary: 'No Authorization header', value: problemExample('invalid-api-key', 'Send the platform API key as "Authorization: Bearer <API_KEY>".') },
          unknown: { summary: 'Unknown or revoked key', value: problemExample('invalid-api-key', 'The API key is invalid or has been revoked.') },
        },
        { 'WWW-Authenticate': { description: 'The Bearer challenge.', schema: { type: 'string', example: 'Bearer' } } },
      ),
    ),
    FORBIDDEN,
  );
}

/**
 * A route of the signed-in platform owner (identity-provider ID token, with `role` when given):
 * authentication under the rate limits (401, 403), then RawInputGuard; with their OpenAPI
 * security scheme and 401/403 answers.
 */
export function IdTokenRoute(role?: string): MethodDecorator {
  const roleExample: Record<string, { summary: string; value: ProblemDetails }> = role
    ? { role: { summary: `Not the ${role} role`, value: problemExample('invalid-id-token', `The ID token does not carry the ${role} role; sign in with an account that has the ${role} role.`) } }
    : {};
  return applyDecorators(
    UseGuards(IdTokenGuard, RawInputGuard),
    ...(role ? [RequireRole(role)] : []),
    ApiBearerAuth(ID_TOKEN_SECURITY),
    ApiUnauthorizedResponse(
      problemResponse(
        `No, invalid or expired ID token${role ? `, a token without the ${role} role` : ''}, an API key instead of an ID token, or an account that owns no platform. Sign in again for a new token.`,
        {
          missing: { summary: 'No token', value: problemExample('invalid-id-token', 'Send the ID token of the signed-in platform owner as "Authorization: Bearer <ID_TOKEN>".') },
          expired: { summary: 'Expired token', value: problemExample('invalid-id-token', 'The ID token has expired; sign in again for a new one.') },
          ...roleExample,
          api_key: { summary: 'API key sent', value: problemExample('invalid-id-token', 'An API key is not accepted here; send the ID token of the signed-in platform owner.') },
        },
        { 'WWW-Authenticate': { description: 'The Bearer challenge.', schema: { type: 'string', example: 'Bearer error="invalid_token"' } } },
      ),
    ),
    FORBIDDEN,
  );
}
