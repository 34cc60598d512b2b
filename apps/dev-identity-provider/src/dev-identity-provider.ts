import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { DEMO_OWNER_USERNAME, DEMO_PLATFORM } from '#libs/demo';
import { loginPage, messagePage, PAGE_HEADERS } from './login.page.js';
import { memoryAdapterFactory } from './memory.adapter.js';

/** The dashboard's OAuth client at the development provider (OIDC_CLIENT_ID, OIDC_AUDIENCE). */
export const DEV_DASHBOARD_CLIENT_ID = 'weave-dashboard';
/**
 * The dashboard's redirect URI is its own base URL: `<gateway origin>/dashboard/`. The app
 * reads the authorization response from its query string and removes it from the address bar
 * at once (apps/dashboard/README.md).
 */
export const DASHBOARD_REDIRECT_PATH = '/dashboard/';

export interface DevAccount {
  /** Sign-in name on the provider's login form. */
  username: string;
  /** Generated (24 random characters) when absent. */
  password?: string;
  /** The ID token's `sub`: the owner_uid of the platform this person owns. */
  sub: string;
  /** Value of the role claim; null or absent: no role claim (no payouts). */
  role?: string | null;
  name?: string;
}

export interface DevIdentityProviderOptions {
  /** Listening port; 0 (the default) takes a free one. */
  port?: number;
  /** Loopback only (127.0.0.1 by default; `localhost` and `::1` too): the demo credentials are printed. */
  host?: string;
  /** Origin(s) of the gateway that serves the dashboard, e.g. `http://127.0.0.1:3000`. */
  dashboardOrigin: string | readonly string[];
  /** The demo owner; defaults: username `demo`, sub DEMO_PLATFORM.ownerUid, role `agent`, a generated password. */
  owner?: Partial<DevAccount>;
  /** More people who can sign in (e.g. an owner without the `agent` role for tests). */
  additionalAccounts?: readonly DevAccount[];
  /** Default `weave-dashboard`. */
  clientId?: string;
  /** The claim that carries the role (OIDC_ROLE_CLAIM); default `role`. */
  roleClaim?: string;
  /** Lifetime of ID and access tokens; default 3600 s. Refresh tokens live as long as the sign-in session (1 day). */
  tokenTtlSeconds?: number;
}

export interface DevIdentityProvider {
  /** e.g. `http://127.0.0.1:43121` (OIDC_ISSUER). */
  issuer: string;
  /** The provider's JWKS (OIDC_JWKS_URL). */
  jwksUrl: string;
  /** The dashboard's client id (OIDC_CLIENT_ID and OIDC_AUDIENCE). */
  clientId: string;
  redirectUris: string[];
  /** Where a person starts: the dashboard of the first origin (`<origin>/dashboard/`). */
  signInUrl: string;
  /** The demo owner's credentials, to be printed. */
  credentials: { username: string; password: string };
  /** Everybody who can sign in, with their passwords. */
  accounts: Required<DevAccount>[];
  /** The gateway settings that point at this provider. */
  env: { OIDC_ISSUER: string; OIDC_AUDIENCE: string; OIDC_JWKS_URL: string; OIDC_CLIENT_ID: string; OIDC_ROLE_CLAIM: string };
  close(): Promise<void>;
}

const SESSION_TTL_S = 24 * 3600;
const INTERACTION_TTL_S = 3600;
const AUTHORIZATION_CODE_TTL_S = 60;
const MAX_FORM_BYTES = 8 * 1024;

function isLoopbackHost(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

function generatedPassword(): string {
  return randomBytes(18).toString('base64url');
}

/** Constant-time comparison of two secrets of any length (both are hashed first). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

function normalizeAccounts(options: DevIdentityProviderOptions): Required<DevAccount>[] {
  const owner: Required<DevAccount> = {
    username: options.owner?.username ?? DEMO_OWNER_USERNAME,
    password: options.owner?.password ?? generatedPassword(),
    sub: options.owner?.sub ?? DEMO_PLATFORM.ownerUid,
    role: options.owner?.role === undefined ? 'agent' : options.owner.role,
    name: options.owner?.name ?? 'Demo owner',
  };
  const others = (options.additionalAccounts ?? []).map((a) => ({
    username: a.username,
    password: a.password ?? generatedPassword(),
    sub: a.sub,
    role: a.role ?? null,
    name: a.name ?? a.username,
  }));
  const accounts = [owner, ...others];
  if (new Set(accounts.map((a) => a.username)).size !== accounts.length || new Set(accounts.map((a) => a.sub)).size !== accounts.length) {
    throw new Error('development identity provider: usernames and subs must be unique');
  }
  return accounts;
}

function redirectUrisOf(dashboardOrigin: string | readonly string[]): string[] {
  const origins = typeof dashboardOrigin === 'string' ? [dashboardOrigin] : [...dashboardOrigin];
  if (origins.length === 0) throw new Error('development identity provider: dashboardOrigin is required');
  return origins.map((origin) => {
    const url = new URL(origin);
    if (url.origin !== origin.replace(/\/$/, '')) throw new Error(`dashboardOrigin must be an origin (scheme://host:port), got ${origin}`);
    return `${url.origin}${DASHBOARD_REDIRECT_PATH}`;
  });
}

async function signingKey(): Promise<Record<string, unknown>> {
  const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const kid = `dev-${randomBytes(6).toString('hex')}`;
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) throw new Error('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sendPage(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, PAGE_HEADERS).end(html);
}

/**
 * Starts a real OpenID Provider (oidc-provider) on loopback for development (DESIGN §2): one
 * demo owner (`sub` = the demo platform's owner_uid, `role: "agent"` in the ID token), the
 * dashboard registered as a public client (Authorization Code with PKCE S256 only, refresh
 * tokens for silent renewal), ID tokens signed RS256 with a key generated at start. Everything
 * lives in memory: a restart signs everybody out.
 *
 * The sign-in is a plain HTML form (no script); consent is implied for the first-party
 * dashboard client. Never part of a container image (.dockerignore; oidc-provider is a
 * devDependency).
 */
export async function startDevIdentityProvider(options: DevIdentityProviderOptions): Promise<DevIdentityProvider> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) throw new Error(`the development identity provider listens on loopback only, not on ${host}`);
  const clientId = options.clientId ?? DEV_DASHBOARD_CLIENT_ID;
  const roleClaim = options.roleClaim ?? 'role';
  const tokenTtl = options.tokenTtlSeconds ?? 3600;
  const accounts = normalizeAccounts(options);
  const redirectUris = redirectUrisOf(options.dashboardOrigin);

  // Created once the port (and so the issuer) is known; until then requests get 503.
  const started: { provider?: Provider } = {};
  const server: Server = createServer((request, response) => {
    const provider = started.provider;
    if (!provider) {
      response.writeHead(503).end();
      return;
    }
    const path = (request.url ?? '/').split('?')[0]!;
    if (path.startsWith('/interaction/')) {
      interaction(provider, request, response).catch(() => {
        if (!response.headersSent) sendPage(response, 400, messagePage('Sign-in expired', 'This sign-in attempt is no longer valid. Go back to the dashboard and sign in again.'));
        else response.end();
      });
      return;
    }
    provider.callback()(request, response);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const issuer = `http://${urlHost(host)}:${port}`;

  const byUsername = new Map(accounts.map((a) => [a.username, a]));
  const bySub = new Map(accounts.map((a) => [a.sub, a]));

  const configuration: Configuration = {
    adapter: memoryAdapterFactory(),
    clients: [
      {
        client_id: clientId,
        client_name: 'Weave dashboard',
        application_type: 'web',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: redirectUris,
        id_token_signed_response_alg: 'RS256',
      },
    ],
    jwks: { keys: [await signingKey()] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // `role` with `openid`, so every ID token of the dashboard carries it; `name` with `profile`.
    claims: { openid: ['sub', roleClaim], profile: ['name', 'preferred_username'] },
    // Scope claims go into the ID token even though an access token is issued too: the gateway
    // reads the role from the ID token.
    conformIdTokenClaims: false,
    findAccount: (_ctx, sub) => {
      const account = bySub.get(sub);
      if (!account) return undefined;
      return {
        accountId: account.sub,
        claims: () => ({
          sub: account.sub,
          name: account.name,
          preferred_username: account.username,
          ...(account.role === null ? {} : { [roleClaim]: account.role }),
        }),
      };
    },
    // A refresh token for every openid sign-in of a client allowed the grant: the dashboard
    // renews its tokens without an iframe (third-party cookies and `frame-ancestors 'none'`
    // would break one). It expires with the provider's session (no offline_access).
    issueRefreshToken: (_ctx, client, code) => client.grantTypeAllowed('refresh_token') && code.scopes.has('openid'),
    clientBasedCORS: (_ctx, origin, client) => client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
    pkce: { required: () => true },
    responseTypes: ['code'],
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx, client, token) => token.clientId === client.clientId,
      },
      rpInitiatedLogout: { enabled: false },
    },
    ttl: {
      AccessToken: tokenTtl,
      IdToken: tokenTtl,
      AuthorizationCode: AUTHORIZATION_CODE_TTL_S,
      RefreshToken: SESSION_TTL_S,
      Session: SESSION_TTL_S,
      Grant: SESSION_TTL_S,
      Interaction: INTERACTION_TTL_S,
    },
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.set(PAGE_HEADERS);
      ctx.body = messagePage('Sign-in failed', `${out.error}: ${out.error_description ?? ''}`);
    },
  };
  started.provider = new Provider(issuer, configuration);

  async function interaction(oidc: Provider, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const details = await oidc.interactionDetails(request, response);
    const action = `/interaction/${details.uid}/login`;
    const path = (request.url ?? '/').split('?')[0]!;
    const client = await oidc.Client.find(String(details.params.client_id));
    const clientName = client?.clientName ?? 'the dashboard';

    if (details.prompt.name === 'login') {
      if (request.method === 'GET' && path === `/interaction/${details.uid}`) {
        sendPage(response, 200, loginPage({ action, clientName }));
        return;
      }
      if (request.method === 'POST' && path === action) {
        const form = await readForm(request);
        const username = form.get('username') ?? '';
        const account = byUsername.get(username);
        // Always one comparison, known user or not.
        const ok = sameSecret(form.get('password') ?? '', account?.password ?? generatedPassword()) && account !== undefined;
        if (!ok) {
          sendPage(response, 401, loginPage({ action, clientName, username, error: 'Unknown username or wrong password.' }));
          return;
        }
        await oidc.interactionFinished(request, response, { login: { accountId: account.sub } }, { mergeWithLastSubmission: false });
        return;
      }
    }
    if (details.prompt.name === 'consent') {
      // The dashboard is the provider's own first-party client: consent is implied.
      const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = details.prompt.details as {
        missingOIDCScope?: string[];
        missingOIDCClaims?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      const grant = details.grantId
        ? ((await oidc.Grant.find(details.grantId)) ?? new oidc.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) }))
        : new oidc.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) });
      if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(' '));
      if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
      for (const [indicator, scopes] of Object.entries(missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
      const grantId = await grant.save();
      await oidc.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
      return;
    }
    sendPage(response, 404, messagePage('Not found', 'There is nothing here.'));
  }

  const owner = accounts[0]!;
  return {
    issuer,
    jwksUrl: `${issuer}/jwks`,
    clientId,
    redirectUris,
    signInUrl: redirectUris[0]!,
    credentials: { username: owner.username, password: owner.password },
    accounts,
    env: { OIDC_ISSUER: issuer, OIDC_AUDIENCE: clientId, OIDC_JWKS_URL: `${issuer}/jwks`, OIDC_CLIENT_ID: clientId, OIDC_ROLE_CLAIM: roleClaim },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
