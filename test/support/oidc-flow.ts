import { createHash, randomBytes } from 'node:crypto';

/**
 * OpenID Connect Authorization Code + PKCE over plain HTTP, as a browser does it but without
 * one: follow the redirects by hand, keep the provider's cookies, post the sign-in form.
 * For tests of the development identity provider.
 */
export interface CodeFlowOptions {
  issuer: string;
  clientId: string;
  redirectUri: string;
  username: string;
  password: string;
  scope?: string;
  /** Leave out the PKCE challenge (to see the provider refuse). */
  withoutPkce?: boolean;
}

export interface TokenResponse {
  id_token: string;
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

export type CodeFlowResult =
  | { ok: true; code: string; state: string; codeVerifier: string; nonce: string; tokenEndpoint: string; steps: string[] }
  /** The provider stopped on a page (e.g. the form again after a wrong password) or redirected back with an error. */
  | { ok: false; status: number; body: string; location?: string; steps: string[] };

/** A cookie jar by name: enough for one provider on one origin. */
class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index).trim();
      const value = pair!.slice(index + 1).trim();
      const expired = attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function discover(issuer: string): Promise<Record<string, string>> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`);
  if (!response.ok) throw new Error(`discovery answered ${response.status}`);
  return (await response.json()) as Record<string, string>;
}

/** Signs in on the provider's form and returns the authorization code (or where it stopped). */
export async function authorizationCodeFlow(options: CodeFlowOptions): Promise<CodeFlowResult> {
  const metadata = await discover(options.issuer);
  const { verifier, challenge } = pkcePair();
  const state = randomBytes(12).toString('base64url');
  const nonce = randomBytes(12).toString('base64url');
  const authorize = new URL(metadata.authorization_endpoint!);
  authorize.search = new URLSearchParams({
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    response_type: 'code',
    scope: options.scope ?? 'openid profile',
    state,
    nonce,
    ...(options.withoutPkce ? {} : { code_challenge: challenge, code_challenge_method: 'S256' }),
  }).toString();

  const jar = new CookieJar();
  const steps: string[] = [];
  let request: { url: string; init?: RequestInit } = { url: authorize.toString() };
  for (let hop = 0; hop < 12; hop++) {
    steps.push(`${request.init?.method ?? 'GET'} ${new URL(request.url).pathname}`);
    const response = await fetch(request.url, { ...request.init, redirect: 'manual', headers: { ...(request.init?.headers as Record<string, string>), cookie: jar.header() } });
    jar.store(response);
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      const next = new URL(location, request.url);
      if (next.toString().startsWith(options.redirectUri)) {
        const code = next.searchParams.get('code');
        if (!code) return { ok: false, status: response.status, body: '', location: next.toString(), steps };
        if (next.searchParams.get('state') !== state) throw new Error('state mismatch');
        return { ok: true, code, state, codeVerifier: verifier, nonce, tokenEndpoint: metadata.token_endpoint!, steps };
      }
      request = { url: next.toString() };
      continue;
    }
    const body = await response.text();
    const form = /<form method="post" action="([^"]+)"/.exec(body);
    if (response.status === 200 && form && !steps.some((s) => s.startsWith('POST'))) {
      request = {
        url: new URL(form[1]!.replace(/&amp;/g, '&'), request.url).toString(),
        init: {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ username: options.username, password: options.password }).toString(),
        },
      };
      continue;
    }
    return { ok: false, status: response.status, body, steps };
  }
  throw new Error(`too many redirects: ${steps.join(' → ')}`);
}

/** POSTs a form to the token endpoint as a public client (no client secret). */
export async function tokenRequest(tokenEndpoint: string, params: Record<string, string>, origin?: string): Promise<Response> {
  return fetch(tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(origin ? { origin } : {}) },
    body: new URLSearchParams(params).toString(),
  });
}

/** The whole flow: sign in, exchange the code with its verifier, return the tokens. */
export async function signInForTokens(options: CodeFlowOptions): Promise<TokenResponse> {
  const flow = await authorizationCodeFlow(options);
  if (!flow.ok) throw new Error(`sign-in stopped with HTTP ${flow.status} after ${flow.steps.join(' → ')}`);
  const response = await tokenRequest(flow.tokenEndpoint, {
    grant_type: 'authorization_code',
    code: flow.code,
    redirect_uri: options.redirectUri,
    client_id: options.clientId,
    code_verifier: flow.codeVerifier,
  });
  if (!response.ok) throw new Error(`token endpoint answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as TokenResponse;
}

/** The claims of a JWT, unverified (for assertions only; the gateway's verifier does the checking). */
export function jwtClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
