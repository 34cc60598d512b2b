import { createServiceDataSource } from '#libs/database';
import { PayoutsInitial1764201600000 } from './migrations/1764201600000-payouts-initial.js';

export const PAYOUTS_SCHEMA = 'payouts';

export function createPayoutsDataSource(url: string, poolSize: number) {
  return createServiceDataSource({
    url,
    schema: PAYOUTS_SCHEMA,
    entities: [],
    migrations: [PayoutsInitial1764201600000],
    poolSize,
    applicationName: 'payouts-read',
  });
}
