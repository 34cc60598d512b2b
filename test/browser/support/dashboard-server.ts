import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, resolve } from 'node:path';

/** The built dashboard (npm run build:dashboard). */
export const DASHBOARD_DIST = resolve(process.cwd(), 'dist/dashboard');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
  '.json': 'application/json',
};

/**
 * The Content-Security-Policy the dashboard is built for (apps/dashboard/README.md): scripts
 * and styles from its own origin only (no 'unsafe-inline'), API calls to its own origin and to
 * the identity provider, nothing framing it.
 */
export function dashboardCsp(issuer: string | null): string {
  const connect = ["'self'", ...(issuer ? [new URL(issuer).origin] : [])].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

export interface DashboardServer {
  origin: string;
  /** What GET /dashboard/config.json answers (the contract of apps/dashboard/README.md). */
  setConfig(config: Record<string, unknown>): void;
  close(): Promise<void>;
}

/**
 * A tiny static server for the built dashboard, standing in for the gateway (which serves it in
 * the next round): /dashboard/ (index.html, never cached), /dashboard/assets/* (hashed,
 * immutable), /dashboard/config.json, with the dashboard's security headers. Everything else
 * is 404 (there is no API behind it).
 */
export async function startDashboardServer(): Promise<DashboardServer> {
  let config: Record<string, unknown> = { issuer: null, client_id: null, role_claim: 'role', api_base_url: '' };
  const server: Server = createServer((request, response) => {
    void (async () => {
      const path = decodeURIComponent((request.url ?? '/').split('?')[0]!);
      const headers = {
        'content-security-policy': dashboardCsp(typeof config.issuer === 'string' ? config.issuer : null),
        'referrer-policy': 'no-referrer',
        'x-content-type-options': 'nosniff',
      };
      if (path === '/dashboard') {
        response.writeHead(308, { ...headers, location: '/dashboard/' }).end();
        return;
      }
      if (path === '/dashboard/config.json') {
        response.writeHead(200, { ...headers, 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(config));
        return;
      }
      if (!path.startsWith('/dashboard/')) {
        response.writeHead(404, { ...headers, 'content-type': 'application/problem+json' }).end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'No API behind this test server.' }));
        return;
      }
      const relative = path === '/dashboard/' ? 'index.html' : normalize(path.slice('/dashboard/'.length));
      if (relative.startsWith('..')) {
        response.writeHead(404, headers).end();
        return;
      }
      try {
        const body = await readFile(join(DASHBOARD_DIST, relative));
        const cache = relative === 'index.html' ? 'no-cache' : relative.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=3600';
        response.writeHead(200, { ...headers, 'content-type': TYPES[extname(relative)] ?? 'application/octet-stream', 'cache-control': cache }).end(body);
      } catch {
        response.writeHead(404, headers).end();
      }
    })();
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as { port: number };
  return {
    origin: `http://127.0.0.1:${port}`,
    setConfig: (next) => (config = next),
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
