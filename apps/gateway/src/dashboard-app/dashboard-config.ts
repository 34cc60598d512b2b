import type { GatewayEnv } from '../config/gateway.env.js';

/**
 * GET /dashboard/config.json (apps/dashboard/README.md, `DashboardConfig` in
 * apps/dashboard/src/config/dashboard-config.ts): what the app needs to sign in, made from the
 * gateway's environment, so one build of the app serves every environment.
 */
export interface DashboardConfigBody {
  issuer: string | null;
  client_id: string | null;
  role_claim: string;
  /** "": the API is the origin that serves the dashboard (this gateway). */
  api_base_url: string;
}

/**
 * Sign-in needs both OIDC_ISSUER and OIDC_CLIENT_ID: with one missing, both are null and the
 * app says that sign-in is not configured (rather than starting a sign-in that must fail).
 */
export function dashboardConfig(env: Pick<GatewayEnv, 'OIDC_ISSUER' | 'OIDC_CLIENT_ID' | 'OIDC_ROLE_CLAIM'>): DashboardConfigBody {
  const configured = Boolean(env.OIDC_ISSUER && env.OIDC_CLIENT_ID);
  return {
    issuer: configured ? env.OIDC_ISSUER!.replace(/\/+$/, '') : null,
    client_id: configured ? env.OIDC_CLIENT_ID! : null,
    role_claim: env.OIDC_ROLE_CLAIM,
    api_base_url: '',
  };
}
