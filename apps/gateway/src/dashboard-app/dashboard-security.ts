import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { GatewayEnv } from '../config/gateway.env.js';

/** The origin of an http(s) URL, or undefined for anything else (a JWKS file path, garbage). */
function httpOrigin(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where the dashboard may connect (CSP `connect-src`): its own origin (the owner API and
 * config.json), the identity provider's issuer (discovery, token and revocation endpoints:
 * the app exchanges the code from the browser) and DASHBOARD_CONNECT_SRC.
 */
export function dashboardConnectSources(env: Pick<GatewayEnv, 'OIDC_ISSUER' | 'DASHBOARD_CONNECT_SRC'>): string[] {
  const extra = (env.DASHBOARD_CONNECT_SRC ?? '')
    .split(',')
    .map((entry) => httpOrigin(entry.trim()))
    .filter((origin): origin is string => origin !== undefined);
  const issuer = httpOrigin(env.OIDC_ISSUER);
  return [...new Set(["'self'", ...(issuer ? [issuer] : []), ...extra])];
}

/**
 * @fastify/helmet's settings for the dashboard's responses (apps/dashboard/README.md): the build
 * has no inline script or style, so scripts and styles come from the gateway only; nothing may
 * frame the app (`frame-ancestors 'none'`, X-Frame-Options DENY); no referrer leaves it (the
 * sign-in response's `code` is in the URL for a moment). Helmet's other defaults stay
 * (nosniff, COOP/CORP same-origin, …), except HSTS: TLS ends at the ingress, which sets it for
 * the whole host (docs/security.md).
 */
export function dashboardHelmetOptions(env: Pick<GatewayEnv, 'OIDC_ISSUER' | 'DASHBOARD_CONNECT_SRC'>): FastifyHelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'none'"],
        'script-src': ["'self'"],
        'style-src': ["'self'"],
        'img-src': ["'self'"],
        'connect-src': dashboardConnectSources(env),
        'base-uri': ["'none'"],
        'form-action': ["'none'"],
        'frame-ancestors': ["'none'"],
        'object-src': ["'none'"],
      },
    },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    strictTransportSecurity: false,
  };
}
