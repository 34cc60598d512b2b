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

/** A fault spec file's servers (see useFaultServers), with the services it started. */
export interface FaultStack extends FaultServers {
  /** Child processes the file started: killed after its tests, before the servers stop. */
  services: ServiceProcess[];
  /** The services' database on the private PostgreSQL. */
  databaseUrl: string;
  /** NATS_URL, DATABASE_URL and REDIS_URL of the private servers. */
  env: { NATS_URL: string; DATABASE_URL: string; REDIS_URL: string };
}

/**
 * In a fault spec file: its private servers and producer started in beforeAll, and in afterAll
 * the services pushed to `services` killed and the servers stopped. Fields are there once
 * beforeAll has run.
 */
export function useFaultServers(): FaultStack {
  let servers: FaultServers | undefined;
  const services: ServiceProcess[] = [];
  const get = (): FaultServers => {
    if (!servers) throw new Error("the fault servers are used before the file's beforeAll ran");
    return servers;
  };
  beforeAll(async () => {
    servers = await startFaultServers();
  });
  afterAll(() => stopFaultServers(servers ?? {}, services));
  return {
    services,
    get postgres() {
      return get().postgres;
    },
    get nats() {
      return get().nats;
    },
    get redis() {
      return get().redis;
    },
    get producer() {
      return get().producer;
    },
    get databaseUrl() {
      return get().postgres.url('weave');
    },
    get env() {
      return { NATS_URL: get().nats.url, DATABASE_URL: get().postgres.url('weave'), REDIS_URL: get().redis.url };
    },
  };
}
