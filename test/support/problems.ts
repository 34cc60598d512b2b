/** The problem document (RFC 9457) every refusal of the services' HTTP APIs answers with. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  [field: string]: unknown;
}

export const PROBLEM_BASE = 'https://docs.weave.example/problems/';

/**
 * Asserts `response` is a problem: the status, `application/problem+json`, a body with that
 * status, a title and a detail, and a type that is `PROBLEM_BASE + type` (a string) or matches
 * it (a RegExp) when given. Returns the body for the assertions a test adds.
 */
export async function expectProblem(response: Response, status: number, type?: string | RegExp): Promise<Problem> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as Problem;
  expect(problem.status).toBe(status);
  if (typeof type === 'string') expect(problem.type).toBe(`${PROBLEM_BASE}${type}`);
  else if (type) expect(problem.type).toMatch(type);
  expect(problem.title).toBeTruthy();
  expect(typeof problem.detail).toBe('string');
  expect(problem.detail.length).toBeGreaterThan(0);
  return problem;
}

/** `authorization: Bearer <credential>` (none for undefined), with the headers given. */
export function bearer(credential: string | undefined, headers: Record<string, string> = {}): Record<string, string> {
  return credential === undefined ? headers : { ...headers, authorization: `Bearer ${credential}` };
}
