import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query, applyDecorators } from '@nestjs/common';
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { IdTokenRoute } from '../auth/authenticated-route.decorator.js';
import { Owner, type OwnerPrincipal } from '../auth/id-token.guard.js';
import {
  BODY_TOO_LARGE_RESPONSE,
  MALFORMED_JSON_RESPONSE,
  NOT_JSON_RESPONSE,
  REQUEST_ID_HEADER_DOC,
  problemExample,
  problemResponse,
} from '../docs/problem-responses.js';
import { NoQueryDto } from '../http/no-query.dto.js';
import { ProblemDto } from '../http/problem.dto.js';
import { CreateKeyRequestDto, CreatedKeyDto, KEY_LIST_EXAMPLE, KeyDto, KeyListDto, MAX_ACTIVE_KEYS } from './keys.dto.js';
import { KEYS_UNAVAILABLE, KEY_LIMIT, KEY_NOT_FOUND, KeysService } from './keys.service.js';

// --- OpenAPI description of the responses (DESIGN §5, §7); the handlers below are the behaviour. ---

const NO_STORE_DOC = { 'Cache-Control': { description: 'Keys are private; the created secret must never be cached.', schema: { type: 'string', example: 'no-store' } } };

/** What every key route shares: the owner's ID token (any role), 401/403/503. */
function KeysEndpoint(operationId: string, summary: string, description: string) {
  return applyDecorators(
    IdTokenRoute(),
    // Keys are private; a created secret must never be cached.
    Header('Cache-Control', 'no-store'),
    ApiOperation({ operationId, summary, description: `${description} Checks run in this order: ID token (401), account (403), input (415, 422).` }),
    ApiServiceUnavailableResponse(
      problemResponse(
        'Key management (or authentication) is temporarily unavailable, or the instance is shutting down. Retry after Retry-After seconds.',
        {
          keys: { summary: 'Key management unavailable', value: problemExample('service-unavailable', KEYS_UNAVAILABLE) },
          authentication: { summary: 'Authentication unavailable', value: problemExample('service-unavailable', 'Authentication is temporarily unavailable; retry later.') },
        },
        { 'Retry-After': { description: 'Seconds to wait before requesting again.', schema: { type: 'integer', example: 5 } } },
      ),
    ),
  );
}

const NO_QUERY_422 = ApiUnprocessableEntityResponse(
  problemResponse('A query parameter was sent; this endpoint takes none.', {
    parameter: { summary: 'A query parameter', value: problemExample('invalid-query', 'Unsupported query parameter "agent_id": this endpoint takes no query parameters.') },
  }),
);

/**
 * The owner's API keys (DESIGN §7): GET, POST and DELETE /agent/keys. The ID token of the
 * platform's owner, any role (an API key here is a 401, a suspended platform a 403), and the
 * per-owner rate limit, by IdTokenRoute; then the input (RawInputGuard: 415 and repeated or
 * broken query parameters; the DTOs: 422); the platform comes from the token only.
 */
@ApiTags('keys')
@ApiExtraModels(ProblemDto, KeyDto, KeyListDto, CreatedKeyDto)
@Controller('agent/keys')
export class KeysController {
  constructor(private readonly keys: KeysService) {}

  @Get()
  @KeysEndpoint('listApiKeys', 'API keys of the platform', 'Every key of the signed-in owner\'s platform, newest first, revoked keys included; never a secret.')
  @ApiOkResponse({ description: 'The keys.', type: KeyListDto, headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC }, example: KEY_LIST_EXAMPLE })
  @NO_QUERY_422
  async list(@Owner() owner: OwnerPrincipal, @Query() _query: NoQueryDto): Promise<KeyListDto> {
    return { items: await this.keys.list(owner) };
  }

  @Post()
  @HttpCode(201)
  @KeysEndpoint(
    'createApiKey',
    'Create an API key',
    `A new live or test key with a name. The answer holds the secret, the only time it is ever shown; the key works at once. A platform has at most ${MAX_ACTIVE_KEYS} unrevoked keys. Recorded in the audit trail with the owner's identity.`,
  )
  @ApiCreatedResponse({
    description: 'The key and its secret (shown this once).',
    type: CreatedKeyDto,
    headers: { ...REQUEST_ID_HEADER_DOC, ...NO_STORE_DOC },
    example: {
      key_id: 'key_3NqK8vT1xWb5YdR2mZ7c',
      api_key: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc9Qm2Xv8KLs0PbN5x9Qa',
      name: 'Production chat backend',
      mode: 'live',
      created_at: '2026-11-25T10:05:31.904Z',
    } satisfies CreatedKeyDto,
  })
  @MALFORMED_JSON_RESPONSE
  @ApiConflictResponse(
    problemResponse(`The platform already has ${MAX_ACTIVE_KEYS} unrevoked keys. Revoke one first.`, {
      limit: { summary: 'Too many keys', value: problemExample('key-limit-reached', KEY_LIMIT) },
    }),
  )
  @BODY_TOO_LARGE_RESPONSE
  @NOT_JSON_RESPONSE
  @ApiUnprocessableEntityResponse(
    problemResponse('The body is not exactly {"mode", "name"}: a field missing or unknown, an unsupported mode, or a name that is empty, blank, longer than 64 characters or holds control characters.', {
      mode: { summary: 'Unsupported mode', value: problemExample('invalid-body', 'Unsupported mode "prod": live or test.') },
      name: { summary: 'Control characters', value: problemExample('invalid-body', 'name must not contain control characters, line breaks or bidirectional overrides.') },
      missing: { summary: 'A missing field', value: problemExample('invalid-body', 'name is required. Send {"mode": "live" | "test", "name": "<1–64 characters>"}.') },
      unknown_field: { summary: 'Another field', value: problemExample('invalid-body', 'Unsupported field "agent_id": mode and name are its only fields.') },
    }),
  )
  create(@Owner() owner: OwnerPrincipal, @Body() body: CreateKeyRequestDto): Promise<CreatedKeyDto> {
    return this.keys.create(owner, body);
  }

  @Delete(':key_id')
  @HttpCode(204)
  @KeysEndpoint(
    'revokeApiKey',
    'Revoke an API key',
    'The key is refused (401) by every gateway within a second. Revoking a revoked key changes nothing and also answers 204. Recorded in the audit trail with the owner\'s identity.',
  )
  @ApiParam({ name: 'key_id', type: 'string', description: 'The key_id of a key of the platform.', example: 'key_3NqK8vT1xWb5YdR2mZ7c' })
  @ApiNoContentResponse({ description: 'Revoked (or already revoked).', headers: REQUEST_ID_HEADER_DOC })
  @ApiNotFoundResponse(
    problemResponse('No key with this id belongs to the platform (unknown, or another platform\'s: existence is never revealed).', {
      not_found: { summary: 'Unknown key', value: problemExample('key-not-found', KEY_NOT_FOUND) },
    }),
  )
  @NO_QUERY_422
  revoke(@Owner() owner: OwnerPrincipal, @Param('key_id') keyId: string, @Query() _query: NoQueryDto): Promise<void> {
    return this.keys.revoke(owner, keyId);
  }
}
