import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiClient } from './api/api-client.js';
import { App } from './app.js';
import { AuthController } from './auth/auth-controller.js';
import { ConfigError, parseDashboardConfig, type DashboardConfig } from './config/dashboard-config.js';
import { ConfigErrorPage } from './pages/signed-out-page.js';
import './styles.css';

/** The app's base URL (`/dashboard/`) is also its OAuth redirect URI. */
const baseUrl = new URL(import.meta.env.BASE_URL, window.location.origin).toString();

async function loadConfig(): Promise<DashboardConfig> {
  const response = await fetch(`${baseUrl}config.json`, { cache: 'no-store', credentials: 'omit' });
  if (!response.ok) throw new ConfigError(`GET config.json answered HTTP ${response.status}`);
  return parseDashboardConfig(await response.json());
}

async function boot(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  let config: DashboardConfig;
  try {
    config = await loadConfig();
  } catch (error) {
    root.render(<ConfigErrorPage message={(error as Error).message} />);
    return;
  }
  const auth = new AuthController(config, baseUrl);
  await auth.start(window.location, window.history);
  const api = new ApiClient(config.api_base_url, auth.idToken, auth.refused);
  root.render(
    <StrictMode>
      <App auth={auth} api={api} />
    </StrictMode>,
  );
}

void boot();
