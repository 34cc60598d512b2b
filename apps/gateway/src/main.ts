import { runService } from '#libs/bootstrap';
import { GatewayEnv } from './config/gateway.env.js';
import { createGatewayApp } from './gateway.app.js';

await runService({ service: 'gateway', env: GatewayEnv, port: (env) => env.PORT, create: createGatewayApp });
