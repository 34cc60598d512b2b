import { useSyncExternalStore, type AnchorHTMLAttributes, type ReactNode } from 'react';
import { formatRoute, parseRoute, type Route } from './routes.js';

function subscribe(listener: () => void): () => void {
  window.addEventListener('hashchange', listener);
  return () => window.removeEventListener('hashchange', listener);
}

const currentHash = () => window.location.hash;

/** The page in the URL fragment, re-rendered on every hash change. */
export function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, currentHash));
}

export function navigate(route: Route): void {
  window.location.hash = formatRoute(route);
}

/** A link to a page of the dashboard (a real <a href="#/…">: keyboard, middle-click and screen readers work). */
export function RouteLink({ to, children, ...rest }: { to: Route; children: ReactNode } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  return (
    <a href={formatRoute(to)} {...rest}>
      {children}
    </a>
  );
}
