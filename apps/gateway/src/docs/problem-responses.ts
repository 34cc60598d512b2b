import { ApiUnsupportedMediaTypeResponse, getSchemaPath, type ApiResponseNoStatusOptions } from '@nestjs/swagger';
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
