import type { INestApplication } from '@nestjs/common';
import { NatsClient, NatsRpcServer, RpcErrorFilter, RpcValidationPipe } from '#libs/nats';
import type { Logger } from '#libs/observability';
import { LOGGER } from './infrastructure.js';

/**
 * Makes the app a hybrid: its `@MessagePattern` handlers answer NATS requests in `queue` (the
 * group its replicas share) through NatsRpcServer on the app's NATS connection, each payload
 * validated by RpcValidationPipe and each failure mapped by RpcErrorFilter.
 */
export async function startRpcServer(app: INestApplication, queue: string): Promise<void> {
  const nats = app.get(NatsClient);
  const logger = app.get<Logger>(LOGGER);
  const microservice = app.connectMicroservice({ strategy: new NatsRpcServer(nats.connection, { queue, logger }) }, { inheritAppConfig: false });
  microservice.useGlobalPipes(new RpcValidationPipe());
  microservice.useGlobalFilters(new RpcErrorFilter(logger));
  await app.startAllMicroservices();
}
