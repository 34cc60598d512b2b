import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The charset parameter of a Content-Type, lower-cased and unquoted; undefined without one. */
function charsetOf(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType);
  return match ? match[1].toLowerCase() : undefined;
}

type Done = (error: Error | null, body?: unknown) => void;

/**
 * The `application/json` body parser of every service: JSON is UTF-8 (RFC 8259 §8.1), so
 * - a charset other than UTF-8 is refused (415) rather than guessed at;
 * - bytes that are not valid UTF-8 are refused (400) instead of becoming U+FFFD characters
 *   that validation might then accept;
 * then Fastify's own parser runs, with its checks: empty body, invalid JSON, and `__proto__` /
 * `constructor.prototype` keys (prototype poisoning) all answer 400.
 * The body limit is enforced before this runs (413).
 */
export function strictJsonParser(fastify: FastifyInstance) {
  const parse = fastify.getDefaultJsonParser('error', 'error');
  return (request: FastifyRequest, body: Buffer | string, done: Done): void => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new UnsupportedMediaTypeException('JSON bodies must be UTF-8: send "Content-Type: application/json" without another charset.'));
      return;
    }
    let text: string;
    try {
      text = typeof body === 'string' ? body : utf8.decode(body);
    } catch {
      done(new BadRequestException('The request body is not valid UTF-8.'));
      return;
    }
    parse(request, text, done);
  };
}
