export {
  DASHBOARD_REDIRECT_PATH,
  DEV_DASHBOARD_CLIENT_ID,
  startDevIdentityProvider,
  type DevAccount,
  type DevIdentityProvider,
  type DevIdentityProviderOptions,
} from './dev-identity-provider.js';
export { DevIdentityProviderEnv, parseDevAccounts } from './config/dev-identity-provider.env.js';
export { ensureDemoPlatform } from './demo-platform.js';
