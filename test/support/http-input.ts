import 'reflect-metadata';
import { HttpValidationPipe } from '../../apps/gateway/src/http/http-validation.pipe.js';
import { ProblemException } from '../../apps/gateway/src/http/problem.js';
import { queryStringProblem } from '../../apps/gateway/src/http/raw-input.guard.js';

/**
 * The gateway's input checks without a server, as a request meets them: RawInputGuard's look
 * at the raw URL, then HttpValidationPipe with the route's DTO (the query parsed by the
 * x-www-form-urlencoded rules Fastify's parser follows; a repeated name never reaches it).
 */
export type InputResult = { ok: true; value: Record<string, unknown> } | { ok: false; slug: string; detail: string };

const pipe = new HttpValidationPipe();

async function validate(input: unknown, type: 'query' | 'body', dto: new () => object): Promise<InputResult> {
  try {
    const value = (await pipe.transform(input, { type, metatype: dto, data: undefined })) as object;
    return { ok: true, value: { ...value } };
  } catch (error) {
    if (!(error instanceof ProblemException)) throw error;
    return { ok: false, slug: error.problem.type.split('/').pop()!, detail: error.problem.detail };
  }
}

export async function validateQuery(url: string, dto: new () => object): Promise<InputResult> {
  const problem = queryStringProblem(url);
  if (problem) return { ok: false, slug: 'invalid-query', detail: problem };
  const mark = url.indexOf('?');
  const query = mark < 0 ? '' : url.slice(mark + 1).split('#')[0];
  return validate(Object.fromEntries(new URLSearchParams(query)), 'query', dto);
}

export function validateBody(body: unknown, dto: new () => object): Promise<InputResult> {
  return validate(body, 'body', dto);
}
