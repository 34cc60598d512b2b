import { InMemoryWebStorage, UserManager, WebStorageStateStore, type User } from 'oidc-client-ts';
import type { DashboardConfig } from '../config/dashboard-config.js';
import { rolesOf } from '#libs/oidc-claims';
import { sessionTimers } from './claims.js';

export type SignedOutReason =
  | { kind: 'initial' }
  | { kind: 'signed-out' }
  | { kind: 'expired' }
  | { kind: 'refused' }
  | { kind: 'failed'; message: string }
  | { kind: 'not-configured' };

export type Session =
  | { status: 'starting' }
  | { status: 'signed-out'; reason: SignedOutReason }
  | { status: 'signed-in'; idToken: string; subject: string; displayName: string; roles: string[]; expiresAt: number };

interface SignInState {
  returnTo?: string;
}

/** The claims of a JWT (the ID token we were just given by the provider over TLS). */
function jwtPayload(token: string): Record<string, unknown> {
  const part = token.split('.')[1] ?? '';
  const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
  return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0)))) as Record<string, unknown>;
}

/** Has the current URL the answer of the provider (`?code=…&state=…` or `?error=…&state=…`)? */
function isSignInResponse(url: URL): boolean {
  return url.searchParams.has('state') && (url.searchParams.has('code') || url.searchParams.has('error'));
}

/**
 * The OpenID Connect session (Authorization Code + PKCE with oidc-client-ts):
 *
 * - Tokens live in memory only: the user store is an InMemoryWebStorage, so a reload or a new
 *   tab starts signed out (one click signs in again while the provider's session lasts).
 *   sessionStorage holds only the authorization request in flight (state, nonce, PKCE
 *   verifier) between the redirect and the callback; oidc-client-ts removes it there.
 * - The provider's answer (`?code=…&state=…`) is read once and removed from the address bar.
 * - Renewal: a minute before the ID token expires, a refresh-token grant (no iframe); if that
 *   is impossible or fails, the session ends at the ID token's `exp` with "session expired".
 * - A 401 from the API ends the session at once ("refused").
 * - Signing out forgets the tokens and revokes the refresh token at the provider.
 */
export class AuthController {
  private session: Session = { status: 'starting' };
  private readonly listeners = new Set<() => void>();
  private readonly manager: UserManager | undefined;
  private renewTimer: ReturnType<typeof setTimeout> | undefined;
  private expireTimer: ReturnType<typeof setTimeout> | undefined;
  private user: User | undefined;

  constructor(
    private readonly config: DashboardConfig,
    private readonly redirectUri: string,
  ) {
    if (config.issuer && config.client_id) {
      this.manager = new UserManager({
        authority: config.issuer,
        client_id: config.client_id,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: 'openid profile',
        userStore: new WebStorageStateStore({ store: new InMemoryWebStorage() }),
        stateStore: new WebStorageStateStore({ store: window.sessionStorage, prefix: 'weave-dashboard.signin.' }),
        automaticSilentRenew: false,
        monitorSession: false,
        loadUserInfo: false,
        revokeTokenTypes: ['refresh_token'],
        fetchRequestCredentials: 'omit',
      });
    }
  }

  getSession = (): Session => this.session;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The ID token for API calls, while signed in. */
  idToken = (): string | undefined => (this.session.status === 'signed-in' ? this.session.idToken : undefined);

  private set(session: Session): void {
    this.session = session;
    for (const listener of this.listeners) listener();
  }

  /** Completes a sign-in response in the URL if there is one; otherwise starts signed out. Returns the page to show. */
  async start(location: Location, history: History): Promise<string | undefined> {
    if (!this.manager) {
      this.set({ status: 'signed-out', reason: { kind: 'not-configured' } });
      return undefined;
    }
    const url = new URL(location.href);
    if (!isSignInResponse(url)) {
      void this.manager.clearStaleState().catch(() => undefined);
      this.set({ status: 'signed-out', reason: { kind: 'initial' } });
      return undefined;
    }
    let returnTo: string | undefined;
    try {
      const user = await this.manager.signinRedirectCallback(url.toString());
      returnTo = (user.state as SignInState | undefined)?.returnTo;
      this.adopt(user);
    } catch (error) {
      this.set({ status: 'signed-out', reason: { kind: 'failed', message: (error as Error).message } });
    } finally {
      // The code and state leave the address bar (and the history) at once.
      history.replaceState(null, '', `${url.pathname}${returnTo ?? url.hash}`);
    }
    return returnTo;
  }

  /** Sends the browser to the provider; it comes back to the dashboard at `returnTo` (a hash). */
  async signIn(returnTo: string): Promise<void> {
    if (!this.manager) return;
    const state: SignInState = { returnTo };
    await this.manager.signinRedirect({ state });
  }

  /** Forgets the tokens (and revokes the refresh token); the page shows why. */
  async signOut(reason: SignedOutReason = { kind: 'signed-out' }): Promise<void> {
    this.clearTimers();
    const user = this.user;
    this.user = undefined;
    this.set({ status: 'signed-out', reason });
    if (!this.manager) return;
    if (user?.refresh_token && reason.kind === 'signed-out') await this.manager.revokeTokens(['refresh_token']).catch(() => undefined);
    await this.manager.removeUser().catch(() => undefined);
  }

  /** The API refused the token (401): the session is over. */
  refused = (): void => {
    if (this.session.status === 'signed-in') void this.signOut({ kind: 'refused' });
  };

  private adopt(user: User): void {
    if (!user.id_token) throw new Error('the identity provider returned no ID token');
    const claims = jwtPayload(user.id_token);
    const exp = typeof claims.exp === 'number' ? claims.exp : 0;
    this.user = user;
    this.set({
      status: 'signed-in',
      idToken: user.id_token,
      subject: String(claims.sub ?? ''),
      displayName: String(claims.name ?? claims.preferred_username ?? claims.sub ?? ''),
      roles: rolesOf(claims, this.config.role_claim),
      expiresAt: exp * 1000,
    });
    this.schedule(exp, user.expires_at);
  }

  private clearTimers(): void {
    clearTimeout(this.renewTimer);
    clearTimeout(this.expireTimer);
  }

  private schedule(idTokenExp: number, accessTokenExp: number | undefined): void {
    this.clearTimers();
    const { renewAt, expireAt } = sessionTimers(idTokenExp, accessTokenExp);
    this.expireTimer = setTimeout(() => void this.signOut({ kind: 'expired' }), Math.max(0, expireAt - Date.now()));
    if (this.user?.refresh_token) this.renewTimer = setTimeout(() => void this.renew(), Math.max(0, renewAt - Date.now()));
  }

  private async renew(): Promise<void> {
    if (!this.manager || this.session.status !== 'signed-in') return;
    try {
      const user = await this.manager.signinSilent();
      if (user && this.session.status === 'signed-in') this.adopt(user);
    } catch {
      // Renewal failed: the session ends when the ID token expires (the expiry timer stays).
    }
  }
}
