import type { INestApplication } from '@nestjs/common';
import { ApiExcludeController, DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { HealthController } from '#libs/observability';
import { problemExample, problemResponse } from './problem-responses.js';

/** Name of the security scheme of the platform API key (referenced by @ApiBearerAuth). */
export const API_KEY_SECURITY = 'platform_api_key';
/** Name of the security scheme of identity-provider ID tokens (owner routes). */
export const ID_TOKEN_SECURITY = 'id_token';

/** The OpenAPI document of the gateway, built from the controllers' decorators (DESIGN §5). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('Weave platform API')
    .setDescription(
      'Public HTTP API of the Weave advertising-recommendation platform. Errors are RFC 9457 problem details ' +
        '(application/problem+json); every response carries an X-Request-Id header to quote to support.',
    )
    .setVersion('1')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'Platform API key (sk_live_… or sk_test_…)',
        description:
          'The platform API key from the dashboard, sent as "Authorization: Bearer <API_KEY>". A production key (sk_live_) reports live traffic, a test key (sk_test_) test traffic. Use it only from a backend.',
      },
      API_KEY_SECURITY,
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT (OIDC ID token, RS256 or ES256)',
        description:
          'The ID token of the signed-in platform owner from the identity provider, sent as "Authorization: Bearer <ID_TOKEN>". The token\'s sub must be the owner of the platform. The payout endpoints also need the role agent in the token. API keys are not accepted.',
      },
      ID_TOKEN_SECURITY,
    )
    .addTag('reporting', 'Performance totals of the calling platform, and the same by hour or day (series, JSON or CSV).')
    .addTag('onboarding', 'Settings of the platform, changed by its signed-in owner.')
    .addTag('dashboard', 'Reporting of the signed-in owner\'s platform (ID token) for live or test traffic: what the API-key routes answer, for the web dashboard.')
    .addTag('keys', 'API keys of the platform, managed by its signed-in owner (ID token): list, create (the secret is shown once), revoke.')
    .addTag(
      'payouts',
      'Read-only payout balances, setup readiness, statements and history of the signed-in platform account (ID token with role agent). ' +
        'Available earnings do not mean a transfer has been sent; reporting earnings are not payout balances.',
    )
    .addTag('recommendations', 'Contextual recommendations for an LLM answer, with signed tracking URLs (what @vendor/weave-node calls).')
    .addTag('tracking', 'The exposure and click URLs of recommendations, opened by end users\' browsers: no API key, signed tokens only.')
    .build();
  // Health and metrics are not part of the API. Their controller is shared by every service and
  // does not import @nestjs/swagger (the services without documentation need not load it), so
  // the gateway marks it excluded here, as @ApiExcludeController on the class would.
  ApiExcludeController()(HealthController);
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (_controller, method) => method });
  documentRateLimits(document);
  return document;
}

/**
 * Every authenticated operation is under the gateway's rate limits (apps/gateway/src/rate-limit):
 * documented once here rather than on each route, so a new route cannot forget it.
 */
function documentRateLimits(document: OpenAPIObject): void {
  const tooMany = problemResponse(
    'Too many requests for this API key or ID token, or too many failed authentications from this address. Wait Retry-After seconds.',
    { rate_limited: { summary: 'Rate limit reached', value: problemExample('rate-limited', 'Rate limit of this API key reached; retry after the Retry-After interval.') } },
    { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } },
  );
  for (const item of Object.values(document.paths)) {
    for (const operation of [item.get, item.put, item.post, item.delete, item.patch]) {
      if (operation?.security?.length && !operation.responses['429']) operation.responses['429'] = tooMany as never;
    }
  }
}
