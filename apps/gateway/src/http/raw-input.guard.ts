import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ProblemException } from './problem.js';

/**
 * The checks of a request's input that the validation pipe cannot make, because they need the
 * raw request rather than the parsed value it receives:
 * - a query string that is not valid percent-encoding (Fastify's parser keeps such a name or
 *   value as it came, and the pipe would report it as an unknown parameter or a wrong value);
 * - a query parameter given more than once (the parser makes an array of it, and which value
 *   was meant cannot be told);
 * - a body route called with a body that is not `application/json` (Fastify parses text/plain
 *   too, and a missing body would be validated as an empty object).
 * GET and DELETE routes take their input from the query string and path (a DELETE has no body:
 * one sent is not read), the others from a JSON body (the query string of a body route is not
 * read). Each failure is the route's 415 or 422 problem.
 *
 * A route lists it after its authentication guard, so that the order of checks stays what
 * DESIGN §5 says: credentials (401), account (403), media type (415), input (422). Framing
 * checks that must come before routing (a repeated Authorization or Host header, a body in
 * another charset or content encoding) are the Fastify hooks of libs/bootstrap, for every service.
 */
@Injectable()
export class RawInputGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'DELETE') {
      const problem = queryStringProblem(request.raw.url ?? request.url);
      if (problem) throw new ProblemException('invalid-query', problem);
    } else if (!isJsonContentType(request.headers['content-type'])) {
      throw new ProblemException('unsupported-media-type', 'The body must be application/json.');
    }
    return true;
  }
}

function decode(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/**
 * What is wrong with the query string of a URL that the parsed query cannot show, or
 * undefined. Names and values are decoded by application/x-www-form-urlencoded rules, as
 * Fastify's parser does; empty `&&` segments carry no parameter.
 */
export function queryStringProblem(rawUrl: string): string | undefined {
  const mark = rawUrl.indexOf('?');
  if (mark < 0) return undefined;
  const hash = rawUrl.indexOf('#', mark);
  const seen = new Set<string>();
  for (const segment of rawUrl.slice(mark + 1, hash < 0 ? undefined : hash).split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const name = decode(eq < 0 ? segment : segment.slice(0, eq));
    if (name === null || (eq >= 0 && decode(segment.slice(eq + 1)) === null)) return 'The query string is not valid percent-encoding.';
    if (seen.has(name)) return `${name.slice(0, 64)} must be given at most once.`;
    seen.add(name);
  }
  return undefined;
}

/** Whether a Content-Type header names JSON (application/json, optionally with a UTF-8 charset). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const [type, ...params] = header.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => p === '' || /^charset="?utf-8"?$/.test(p));
}
