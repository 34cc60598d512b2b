import { startNats, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis, type TestNats } from '../../support/index.js';
import { connectFaultProducer, type Producer } from './producer.js';
import type { ServiceProcess } from './services.js';

/** The private servers of one fault test file, and the producer connected to its NATS. */
export interface FaultServers {
  postgres: PrivatePostgres;
  nats: TestNats;
  redis: PrivateRedis;
  producer: Producer;
}

/** Starts a file's own PostgreSQL, NATS (JetStream, file storage) and Redis, never the machine's. */
export async function startFaultServers(): Promise<FaultServers> {
  const [postgres, nats, redis] = await Promise.all([startPrivatePostgres(), startNats(), startPrivateRedis()]);
  return { postgres, nats, redis, producer: await connectFaultProducer(nats.url) };
}

/** Kills the services a file started, then stops its servers (each part may be missing after a failed start). */
export async function stopFaultServers(servers: Partial<FaultServers>, services: (ServiceProcess | undefined)[] = []): Promise<void> {
  servers.nats?.signal('SIGCONT');
  for (const service of services) await service?.kill();
  await servers.producer?.close();
  await Promise.all([servers.nats?.stop(), servers.redis?.destroy(), servers.postgres?.destroy()]);
}
