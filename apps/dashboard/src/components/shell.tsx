import type { MouseEvent, ReactNode } from 'react';
import { PAYOUTS_ROLE } from '../auth/claims.js';
import { DEFAULT_ROUTE, isPayoutRoute, type Route } from '../routing/routes.js';
import { RouteLink } from '../routing/use-route.js';
import { useServices } from './services.js';

function skipToMain(event: MouseEvent<HTMLAnchorElement>) {
  // The fragment holds the page, so the skip link moves focus itself instead of navigating.
  event.preventDefault();
  document.getElementById('main')?.focus();
}

/** Header, navigation and the main landmark around every signed-in page. */
export function Shell({ route, children }: { route: Route; children: ReactNode }) {
  const { auth, session } = useServices();
  const hasPayouts = session.roles.includes(PAYOUTS_ROLE);
  const items: { label: string; to: Route; active: boolean }[] = [
    { label: 'Reporting', to: route.page === 'reporting' ? route : DEFAULT_ROUTE, active: route.page === 'reporting' },
    {
      label: 'Top ads and products',
      to: route.page === 'top' ? route : { page: 'top', traffic: route.page === 'reporting' ? route.traffic : 'live', range: route.page === 'reporting' ? route.range : '30d' },
      active: route.page === 'top',
    },
    { label: 'Reporting timezone', to: { page: 'timezone' }, active: route.page === 'timezone' },
    { label: 'API keys', to: { page: 'keys' }, active: route.page === 'keys' },
    ...(hasPayouts ? [{ label: 'Payouts', to: { page: 'payouts' } as Route, active: isPayoutRoute(route) }] : []),
  ];
  return (
    <>
      <a className="skip-link" href="#main" onClick={skipToMain}>
        Skip to content
      </a>
      <header className="app-header">
        <div className="brand">Weave dashboard</div>
        <nav aria-label="Dashboard">
          <ul>
            {items.map((item) => (
              <li key={item.label}>
                <RouteLink to={item.to} aria-current={item.active ? 'page' : undefined}>
                  {item.label}
                </RouteLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          <span>
            Signed in as <strong data-testid="signed-in-as">{session.displayName}</strong>
          </span>
          <button type="button" className="secondary" onClick={() => void auth.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </>
  );
}
