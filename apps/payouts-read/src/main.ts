import { runService } from '#libs/bootstrap';
import { PayoutsReadEnv } from './config/payouts-read.env.js';
import { createPayoutsReadApp } from './payouts-read.app.js';

await runService({ service: 'payouts-read', env: PayoutsReadEnv, port: (env) => env.PAYOUTS_HTTP_PORT, create: createPayoutsReadApp });
