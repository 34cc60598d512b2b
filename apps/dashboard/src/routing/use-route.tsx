import { useSyncExternalStore, type AnchorHTMLAttributes, type ReactNode } from 'react';
import { formatRoute, parseRoute, type Route } from './routes.js';

/** Components reading the route: told on 'hashchange' (links, back/forward) and at once by navigate(). */
const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('hashchange', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('hashchange', listener);
  };
}

const currentHash = () => window.location.hash;

/** The page in the URL fragment, re-rendered on every hash change. */
export function useRoute(): Route {
  return parseRoute(useSyncExternalStore(subscribe, currentHash));
}

/**
 * Goes to a page. The hash is set at once, but 'hashchange' fires only after the current event:
 * a controlled input (the traffic radio) would meanwhile be put back to its old value by React,
 * so the readers are told synchronously here, inside the event, and re-render with the new route.
 */
export function navigate(route: Route): void {
  window.location.hash = formatRoute(route);
  for (const listener of listeners) listener();
}

/** A link to a page of the dashboard (a real <a href="#/…">: keyboard, middle-click and screen readers work). */
export function RouteLink({ to, children, ...rest }: { to: Route; children: ReactNode } & Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'>) {
  return (
    <a href={formatRoute(to)} {...rest}>
      {children}
    </a>
  );
}
