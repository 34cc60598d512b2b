import { useMemo, useSyncExternalStore } from 'react';
import type { ApiClient } from './api/api-client.js';
import type { AuthController } from './auth/auth-controller.js';
import { PAYOUTS_ROLE } from './auth/claims.js';
import { ServicesContext, type Services } from './components/services.js';
import { Shell } from './components/shell.js';
import { KeysPage } from './pages/keys-page.js';
import { NotFoundPage } from './pages/not-found-page.js';
import { HistoryPage, PayoutsOverviewPage, StatementPage, StatementsPage } from './pages/payouts-page.js';
import { ReportingPage } from './pages/reporting-page.js';
import { TopPage } from './pages/breakdown-tables.js';
import { SignedOutPage } from './pages/signed-out-page.js';
import { TimezonePage } from './pages/timezone-page.js';
import { isPayoutRoute, type Route } from './routing/routes.js';
import { useRoute } from './routing/use-route.js';

function Page({ route, roles }: { route: Route; roles: string[] }) {
  if (isPayoutRoute(route) && !roles.includes(PAYOUTS_ROLE)) {
    return <NotFoundPage message="Payouts need an account with the agent role; yours has none." />;
  }
  switch (route.page) {
    case 'reporting':
      return <ReportingPage route={route} />;
    case 'top':
      return <TopPage route={route} />;
    case 'timezone':
      return <TimezonePage />;
    case 'keys':
      return <KeysPage />;
    case 'payouts':
      return <PayoutsOverviewPage />;
    case 'statements':
      return <StatementsPage route={route} />;
    case 'history':
      return <HistoryPage route={route} />;
    case 'statement':
      return <StatementPage statementId={route.statementId} />;
    case 'not-found':
      return <NotFoundPage message={`There is no page at ${route.path}.`} />;
  }
}

export function App({ auth, api }: { auth: AuthController; api: ApiClient }) {
  const session = useSyncExternalStore(auth.subscribe, auth.getSession);
  const route = useRoute();
  const services = useMemo<Services | null>(() => (session.status === 'signed-in' ? { api, auth, session } : null), [api, auth, session]);

  if (session.status === 'starting') {
    return (
      <p role="status" className="state">
        Signing in…
      </p>
    );
  }
  if (session.status === 'signed-out' || !services) {
    return <SignedOutPage reason={session.status === 'signed-out' ? session.reason : { kind: 'initial' }} onSignIn={() => void auth.signIn(window.location.hash || '#/reporting')} />;
  }
  return (
    <ServicesContext.Provider value={services}>
      <Shell route={route}>
        {/* A new page (not a new query of the same page) starts with fresh state. */}
        <Page key={route.page === 'statement' ? `statement:${route.statementId}` : route.page} route={route} roles={session.roles} />
      </Shell>
    </ServicesContext.Provider>
  );
}
