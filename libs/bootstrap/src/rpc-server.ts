import type { INestApplication } from '@nestjs/common';
import type { MicroserviceOptions } from '@nestjs/microservices';
import { NatsClient, NatsRpcServer } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { LOGGER } from './infrastructure.js';

/**
 * Makes the app a hybrid through Nest's public API: its `@MessagePattern` handlers
 * (`@RpcController()` classes of #libs/nats, which bind RpcValidationPipe and RpcErrorFilter
 * themselves) answer NATS requests in `queue` (the group its replicas share) through
 * NatsRpcServer on the app's NATS connection.
 *
 * The app is initialized first (its providers' bootstrap hooks have run: consumers started,
 * broadcast subscriptions open), then the server is connected and started, so the first
 * request finds the service complete.
 *
 * On shutdown Nest closes the server after the providers' beforeApplicationShutdown hooks and
 * before their onApplicationShutdown hooks: it stops taking requests and answers those in
 * flight before InfrastructureShutdown drains NATS and closes the pools.
 */
export async function startRpcServer(app: INestApplication, queue: string): Promise<void> {
  await app.init();
  const nats = app.get(NatsClient);
  const logger = app.get<Logger>(LOGGER);
  app.connectMicroservice<MicroserviceOptions>({ strategy: new NatsRpcServer(nats.connection, { queue, logger: logger.child({ component: 'rpc' }) }) }, { inheritAppConfig: false });
  await app.startAllMicroservices();
}
