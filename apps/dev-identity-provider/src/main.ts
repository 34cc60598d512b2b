import { ConfigError, loadEnv } from '#libs/config';
import { DevIdentityProviderEnv, parseDevAccounts } from './config/dev-identity-provider.env.js';
import { startDevIdentityProvider } from './dev-identity-provider.js';

/**
 * The development identity provider on its own, for working on the dashboard against a gateway
 * started by hand: `npm run start:dev-identity-provider`, then start the gateway with the printed
 * OIDC_* settings. (`npm start` runs it itself when no OIDC settings are given.)
 *
 * DEV_IDP_PORT (default 3900), DEV_IDP_DASHBOARD_ORIGIN (default http://127.0.0.1:3000, comma
 * separated for several), DEV_IDP_PASSWORD (default: generated), DEV_IDP_ACCOUNTS (more people).
 */
let env: DevIdentityProviderEnv;
try {
  env = loadEnv(DevIdentityProviderEnv);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`invalid configuration: ${error.problems.join('; ')}\n`);
  process.exit(1);
}
const idp = await startDevIdentityProvider({
  port: env.DEV_IDP_PORT,
  dashboardOrigin: env.DEV_IDP_DASHBOARD_ORIGIN.split(',').map((o) => o.trim()),
  owner: env.DEV_IDP_PASSWORD ? { password: env.DEV_IDP_PASSWORD } : {},
  additionalAccounts: env.DEV_IDP_ACCOUNTS ? parseDevAccounts(env.DEV_IDP_ACCOUNTS) : [],
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
