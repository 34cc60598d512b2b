import { ApiBadRequestResponse, ApiPayloadTooLargeResponse, ApiUnsupportedMediaTypeResponse, getSchemaPath, type ApiResponseNoStatusOptions } from '@nestjs/swagger';
import { ProblemDto } from '../http/problem.dto.js';
import { PROBLEM_TYPES, problemType, type ProblemDetails, type ProblemSlug } from '../http/problem.js';

/** OpenAPI pieces every route's documentation shares. */
export const REQUEST_ID_HEADER_DOC = {
  'X-Request-Id': { description: "The caller's X-Request-Id when it is a plain token, else a generated one; quote it to support.", schema: { type: 'string' } },
};

/** A problem body as the gateway would answer it, for examples. */
export function problemExample(slug: ProblemSlug, detail: string): ProblemDetails {
  const { status, title } = PROBLEM_TYPES[slug];
  return { type: problemType(slug), title, status, detail };
}

/** A problem response: application/problem+json with named examples and the request-id header. */
export function problemResponse(
  description: string,
  examples: Record<string, { summary: string; value: ProblemDetails }>,
  headers: Record<string, unknown> = {},
): ApiResponseNoStatusOptions {
  return {
    description,
    headers: { ...REQUEST_ID_HEADER_DOC, ...headers },
    content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDto) }, examples } },
  } as ApiResponseNoStatusOptions;
}

/** The 415 of a JSON body route (RawInputGuard). */
export const NOT_JSON_RESPONSE = ApiUnsupportedMediaTypeResponse(
  problemResponse('The body is not application/json.', {
    not_json: { summary: 'Not JSON', value: problemExample('unsupported-media-type', 'The body must be application/json.') },
  }),
);

/** The 413 of a body over HTTP_BODY_LIMIT (answered by the HTTP layer, whatever the route). */
export const BODY_TOO_LARGE_RESPONSE = ApiPayloadTooLargeResponse(
  problemResponse('The body is larger than the limit (HTTP_BODY_LIMIT, 64 KiB by default).', {
    too_large: { summary: 'Body too large', value: problemExample('payload-too-large', 'Request body is too large') },
  }),
);

/** The 400 of a body that is not parseable JSON (answered by the HTTP layer before the route). */
export const MALFORMED_JSON_RESPONSE = ApiBadRequestResponse(
  problemResponse('The body is not well-formed JSON.', {
    malformed: { summary: 'Malformed JSON', value: problemExample('bad-request', "Body is not valid JSON but content-type is set to 'application/json'") },
  }),
);
