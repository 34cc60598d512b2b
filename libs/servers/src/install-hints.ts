import type { ServerKind } from './urls.js';

/** How to get each server, for the one line that says it is missing. */
export const INSTALL_HINTS: Record<ServerKind, string> = {
  nats: 'apt install nats-server (Debian/Ubuntu), brew install nats-server (macOS), or run the whole system with docker compose up',
  postgres: 'apt install postgresql (Debian/Ubuntu), brew install postgresql@16 (macOS), or run the whole system with docker compose up',
  redis: 'apt install redis-server (Debian/Ubuntu), brew install redis (macOS), or run the whole system with docker compose up',
};
