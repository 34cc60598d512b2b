import { useEffect } from 'react';
import type { SignedOutReason } from '../auth/auth-controller.js';

const MESSAGES: Record<SignedOutReason['kind'], string> = {
  initial: 'Sign in with your identity provider to see your platform’s reports, API keys and payouts.',
  'signed-out': 'You are signed out. Your tokens were forgotten in this browser tab.',
  expired: 'Your session expired. Sign in again to continue.',
  refused: 'The API no longer accepts your sign-in (it expired or was revoked). Sign in again to continue.',
  failed: 'Signing in did not complete.',
  'not-configured': 'Sign-in is not configured on this gateway: it needs OIDC_ISSUER and OIDC_CLIENT_ID (see the README).',
};

/** The page of everybody who is not signed in (at start, after signing out, when the session ended). */
export function SignedOutPage({ reason, onSignIn }: { reason: SignedOutReason; onSignIn: () => void }) {
  useEffect(() => {
    document.title = 'Sign in – Weave dashboard';
  }, []);
  const problem = reason.kind === 'expired' || reason.kind === 'refused' || reason.kind === 'failed';
  return (
    <main id="main" className="signed-out" data-testid="signed-out" data-reason={reason.kind}>
      <h1>Weave platform dashboard</h1>
      <p role={problem ? 'alert' : 'status'} className={problem ? 'message-error' : undefined}>
        {MESSAGES[reason.kind]}
        {reason.kind === 'failed' ? ` (${reason.message})` : ''}
      </p>
      {reason.kind === 'not-configured' ? null : (
        <button type="button" className="primary-large" onClick={onSignIn}>
          Sign in
        </button>
      )}
      <p className="hint">Your tokens stay in this tab’s memory only: reloading the page signs you out of the dashboard.</p>
    </main>
  );
}

/** When config.json cannot be read, nothing else can work. */
export function ConfigErrorPage({ message }: { message: string }) {
  return (
    <main id="main" className="signed-out" data-testid="config-error">
      <h1>Weave platform dashboard</h1>
      <p role="alert" className="message-error">
        The dashboard could not read its configuration: {message}
      </p>
    </main>
  );
}
