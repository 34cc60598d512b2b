import type { INestApplication } from '@nestjs/common';
import type { MicroserviceOptions, NestMicroservice } from '@nestjs/microservices';
import { NatsClient, NatsRpcServer, RpcErrorFilter, RpcValidationPipe } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { LOGGER } from './infrastructure.js';

/**
 * Makes the app a hybrid: its `@MessagePattern` handlers answer NATS requests in `queue` (the
 * group its replicas share) through NatsRpcServer on the app's NATS connection, each payload
 * validated by RpcValidationPipe and each failure mapped by RpcErrorFilter.
 *
 * The app is initialized first (its providers' bootstrap hooks have run: consumers started,
 * broadcast subscriptions open), so the first request finds the service complete.
 *
 * Nest binds a microservice's global pipes and filters to its handlers when it registers its
 * listeners, which `connectMicroservice` does at once unless initialization is deferred; so it
 * is deferred, the pipe and filter are set, and the listeners registered as Nest would.
 * (Marking the init hook as called keeps `listen()` from running the lifecycle hooks of the
 * shared container a second time.)
 *
 * On shutdown Nest closes the server after the providers' beforeApplicationShutdown hooks and
 * before their onApplicationShutdown hooks: it stops taking requests and answers those in
 * flight before InfrastructureShutdown drains NATS and closes the pools.
 */
export async function startRpcServer(app: INestApplication, queue: string): Promise<void> {
  await app.init();
  const nats = app.get(NatsClient);
  const logger = app.get<Logger>(LOGGER);
  const microservice = app.connectMicroservice<MicroserviceOptions>(
    { strategy: new NatsRpcServer(nats.connection, { queue, logger: logger.child({ component: 'rpc' }) }) },
    { inheritAppConfig: false, deferInitialization: true },
  ) as NestMicroservice;
  microservice.useGlobalPipes(new RpcValidationPipe());
  microservice.useGlobalFilters(new RpcErrorFilter(logger));
  microservice.registerListeners();
  microservice.setIsInitialized(true);
  microservice.setIsInitHookCalled(true);
  await app.startAllMicroservices();
}
