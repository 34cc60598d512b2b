/** An RFC 9457 problem as the API sends it (DESIGN §5). */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
}

/** What one API call came to, as the pages need to tell it apart. */
export type Outcome<T> =
  | { kind: 'ok'; status: number; data: T }
  /** 202 while a report scope is being prepared (DESIGN §5); retry after the server's Retry-After. */
  | { kind: 'preparing'; retryAfterSeconds: number }
  /** 401: the ID token is missing, expired or refused; the app signs out. */
  | { kind: 'unauthorized'; problem: Problem }
  /** 503 (or 502/504): a service did not answer in time; the page offers "try again". */
  | { kind: 'unavailable'; problem: Problem }
  /** The request never got an answer (offline, gateway down, CORS). */
  | { kind: 'network'; message: string }
  /** Every other refusal: 403, 404, 409, 413, 415, 422, 429, 500… with the API's explanation. */
  | { kind: 'problem'; status: number; problem: Problem };

/** Default wait when a 202 carries no usable Retry-After (DESIGN §5 sends 60). */
export const DEFAULT_RETRY_AFTER_S = 60;

export function retryAfterSeconds(header: string | null): number {
  if (header === null || !/^\d{1,6}$/.test(header.trim())) return DEFAULT_RETRY_AFTER_S;
  return Number(header.trim());
}

function asProblem(body: unknown, status: number): Problem {
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const { type, title, detail } = body as Record<string, unknown>;
    return {
      status,
      ...(typeof type === 'string' ? { type } : {}),
      ...(typeof title === 'string' ? { title } : {}),
      ...(typeof detail === 'string' ? { detail } : {}),
    };
  }
  return { status };
}

/** Sorts a response (status, Retry-After header, parsed JSON body or undefined) into an Outcome. */
export function classifyResponse<T>(status: number, retryAfter: string | null, body: unknown): Outcome<T> {
  if (status === 202) return { kind: 'preparing', retryAfterSeconds: retryAfterSeconds(retryAfter) };
  if (status >= 200 && status < 300) return { kind: 'ok', status, data: body as T };
  const problem = asProblem(body, status);
  if (status === 401) return { kind: 'unauthorized', problem };
  if (status === 502 || status === 503 || status === 504) return { kind: 'unavailable', problem };
  return { kind: 'problem', status, problem };
}

/** One line for a person: the API's detail, else its title, else the status. */
export function problemMessage(problem: Problem, fallback = 'The request failed.'): string {
  return problem.detail ?? problem.title ?? (problem.status ? `${fallback} (HTTP ${problem.status})` : fallback);
}
