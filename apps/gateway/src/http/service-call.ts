import type { RpcError } from '#libs/contracts';
import { RpcUnavailableError } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { ProblemException, type ProblemSlug } from './problem.js';

/** How the answers of one service behind the gateway become problems. */
export interface ServiceProblems {
  /** Name in the logs, e.g. "reporting". */
  service: string;
  subject: string;
  requestId: unknown;
  logger: Logger;
  /** The 503 answered when the service does not answer or answers unavailable/internal. */
  unavailable: { slug: ProblemSlug; detail: string; retryAfterSeconds: number };
  /** The 422 answered for `invalid_request`, with the service's message or this fallback. */
  invalid: { slug: ProblemSlug; fallback: string };
  /** The answer to `not_found`, for services that have one. */
  notFound?: { slug: ProblemSlug; detail: string };
}

/**
 * Awaits a request/reply to a service; no answer in time (or no responder) becomes the
 * service's 503 problem, logged once. Every controller of the gateway goes through here.
 */
export async function askService<Answer>(call: Promise<Answer>, problems: ServiceProblems): Promise<Answer> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof RpcUnavailableError) {
      problems.logger.warn({ requestId: problems.requestId, subject: problems.subject, err: error.message }, `${problems.service} did not answer`);
      throw unavailable(problems);
    }
    throw error;
  }
}

/** The error to throw for a typed error reply of the service. */
export function serviceErrorProblem(error: RpcError | undefined, problems: ServiceProblems): Error {
  switch (error?.code) {
    case 'not_found':
      if (problems.notFound) return new ProblemException(problems.notFound.slug, problems.notFound.detail);
      break;
    case 'invalid_request':
      return new ProblemException(problems.invalid.slug, error.message || problems.invalid.fallback);
    case 'unavailable':
    case 'internal':
      problems.logger.warn({ requestId: problems.requestId, subject: problems.subject, code: error.code }, `${problems.service} answered with an error`);
      return unavailable(problems);
  }
  // An unexpected code: a contract mismatch between services, not the caller's fault (500).
  return new Error(`unexpected reply from ${problems.subject}: ${JSON.stringify(error)}`);
}

function unavailable({ unavailable: u }: ServiceProblems): ProblemException {
  return new ProblemException(u.slug, u.detail, { 'Retry-After': String(u.retryAfterSeconds) });
}
