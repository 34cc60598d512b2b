import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = dirname(fileURLToPath(import.meta.url));
const repository = resolve(here, '../..');
/** Where `npm run dev:dashboard` sends API calls and config.json (a gateway started by hand). */
const gateway = process.env.DASHBOARD_GATEWAY_URL ?? 'http://127.0.0.1:3000';

/**
 * The dashboard: `npm run build:dashboard` writes dist/dashboard (index.html plus hashed
 * assets under assets/), served by the gateway at /dashboard/. No inline script or style is
 * emitted (the gateway's CSP forbids them).
 */
export default defineConfig({
  root: here,
  base: '/dashboard/',
  publicDir: resolve(here, 'public'),
  resolve: {
    // Shared code as the services import it (#libs/<name>), straight from its TypeScript source.
    alias: [{ find: /^#libs\/([a-z0-9-]+)$/, replacement: `${repository}/libs/$1/src/index.ts` }],
  },
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: resolve(repository, 'dist/dashboard'),
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: true,
    target: 'es2022',
    // The chart library is its own lazily loaded chunk (about 600 kB before compression).
    chunkSizeWarningLimit: 900,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    proxy: {
      '/agent': gateway,
      '/agent-payouts': gateway,
      '/dashboard/config.json': gateway,
    },
  },
  preview: { host: '127.0.0.1', port: 4173, strictPort: true },
});
