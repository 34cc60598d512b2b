import { createContext, useContext } from 'react';
import type { ApiClient } from '../api/api-client.js';
import type { AuthController, Session } from '../auth/auth-controller.js';

export interface Services {
  api: ApiClient;
  auth: AuthController;
  session: Extract<Session, { status: 'signed-in' }>;
}

export const ServicesContext = createContext<Services | null>(null);

export function useServices(): Services {
  const services = useContext(ServicesContext);
  if (!services) throw new Error('useServices outside a signed-in session');
  return services;
}
