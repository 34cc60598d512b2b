import { startDevIdentityProvider } from './dev-identity-provider.js';

/**
 * The development identity provider on its own, for working on the dashboard against a gateway
 * started by hand: `npm run start:dev-identity-provider`, then start the gateway with the printed
 * OIDC_* settings. (`npm start` runs it itself when no OIDC settings are given.)
 *
 * DEV_IDP_PORT (default 3900), DEV_IDP_DASHBOARD_ORIGIN (default http://127.0.0.1:3000, comma
 * separated for several), DEV_IDP_PASSWORD (default: generated).
 */
const idp = await startDevIdentityProvider({
  port: Number(process.env.DEV_IDP_PORT ?? 3900),
  dashboardOrigin: (process.env.DEV_IDP_DASHBOARD_ORIGIN ?? 'http://127.0.0.1:3000').split(',').map((o) => o.trim()),
  owner: process.env.DEV_IDP_PASSWORD ? { password: process.env.DEV_IDP_PASSWORD } : {},
});

process.stdout.write(
  [
    `development identity provider: ${idp.issuer}`,
    `sign in at ${idp.signInUrl} as ${idp.credentials.username} / ${idp.credentials.password}`,
    'gateway settings:',
    ...Object.entries(idp.env).map(([name, value]) => `  ${name}=${value}`),
    '',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void idp.close().finally(() => process.exit(0));
  });
}
