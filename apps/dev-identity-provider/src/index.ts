export {
  DASHBOARD_REDIRECT_PATH,
  DEV_DASHBOARD_CLIENT_ID,
  startDevIdentityProvider,
  type DevAccount,
  type DevIdentityProvider,
  type DevIdentityProviderOptions,
} from './dev-identity-provider.js';
