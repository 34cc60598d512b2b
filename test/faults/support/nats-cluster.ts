import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { NatsServer } from '#libs/servers';
import { freePort, waitFor } from '../../support/index.js';

// A JetStream cluster of nats-server processes on loopback (routes between them), each with its
// own client, route and monitoring ports and store directory, for the clustered fault tests.

export interface ClusterNode {
  /** Server name, as JetStream names leaders and replicas (`cluster.leader`). */
  name: string;
  url: string;
  monitorUrl: string;
  running(): boolean;
  /** Ends the server with a signal (SIGKILL: a crash), keeping its ports and store for start(). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same ports and store; it rejoins the cluster. */
  start(): Promise<void>;
}

export interface NatsCluster {
  nodes: ClusterNode[];
  /** Every server's client URL, as NATS_URL takes them (comma separated). */
  url: string;
  urls: string[];
  node(name: string): ClusterNode;
  /** The names of the clients connected to a running server, by server name (its /connz). */
  connections(): Promise<Record<string, string[]>>;
  stop(): Promise<void>;
}

/**
 * Starts `size` servers with routes to each other and waits until JetStream answers (a meta
 * leader is elected). nats-server is the machine's (NATS_SERVER_BIN to choose another).
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const ports = await Promise.all(Array.from({ length: size }, async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })));
  const clusterName = `weave-faults-${process.pid}`;
  const storeDirs = await Promise.all(ports.map(() => mkdtemp(join(tmpdir(), 'weave-nats-cluster-'))));
  const servers = ports.map(
    (port, i) =>
      new NatsServer({
        port: port.client,
        storeDir: storeDirs[i],
        monitorPort: port.monitor,
        program: process.env.NATS_SERVER_BIN,
        cluster: {
          serverName: `n${i + 1}`,
          name: clusterName,
          port: port.route,
          routes: ports.filter((_, j) => j !== i).map((other) => `nats://127.0.0.1:${other.route}`),
        },
      }),
  );
  const nodes: ClusterNode[] = servers.map((server, i) => ({
    name: `n${i + 1}`,
    url: server.url,
    monitorUrl: `http://127.0.0.1:${ports[i].monitor}`,
    running: () => server.running(),
    kill: (signal: NodeJS.Signals = 'SIGKILL') => server.stop(signal),
    // A restarted server recovers its streams before it takes clients: give it time on a loaded machine.
    start: () => server.start(120_000),
  }));
  const urls = nodes.map((n) => n.url);
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(storeDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  };
  try {
    await Promise.all(servers.map((s) => s.start()));
    await waitForJetStream(urls);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    nodes,
    url: urls.join(','),
    urls,
    node: (name) => {
      const node = nodes.find((n) => n.name === name);
      if (!node) throw new Error(`no server ${name} in the cluster`);
      return node;
    },
    connections: async () => {
      const seen: Record<string, string[]> = {};
      for (const node of nodes.filter((n) => n.running())) {
        const connz = (await (await fetch(`${node.monitorUrl}/connz?limit=1024`)).json()) as { connections?: { name?: string }[] };
        seen[node.name] = (connz.connections ?? []).map((c) => c.name ?? '').filter(Boolean);
      }
      return seen;
    },
    stop,
  };
}

/** Waits until the cluster's JetStream answers an account-info request (a meta leader exists). */
async function waitForJetStream(urls: string[]): Promise<void> {
  const connection = await connect({ servers: urls, name: 'cluster-probe' });
  try {
    const manager: JetStreamManager = await jetstreamManager(connection, { checkAPI: false });
    await waitFor(() => manager.getAccountInfo(), { timeoutMs: 30000, intervalMs: 250, what: 'the JetStream cluster to elect a meta leader' });
  } finally {
    await connection.close();
  }
}

/** The server holding a stream's (or one of its consumers') leadership, once there is one. */
export async function leaderOf(manager: JetStreamManager, stream: string, durable?: string): Promise<string> {
  return waitFor(
    async () => {
      const info = durable ? await manager.consumers.info(stream, durable) : await manager.streams.info(stream);
      return info.cluster?.leader || undefined;
    },
    { timeoutMs: 30000, intervalMs: 100, what: `a leader of ${durable ? `${stream}/${durable}` : stream}` },
  );
}

/** Waits until a stream (or consumer) has a leader and every replica is current (a restarted server caught up). */
export async function waitAllReplicasCurrent(manager: JetStreamManager, stream: string, durable?: string, timeoutMs = 60000): Promise<void> {
  await waitFor(
    async () => {
      const info = durable ? await manager.consumers.info(stream, durable) : await manager.streams.info(stream);
      const replicas = info.cluster?.replicas ?? [];
      return Boolean(info.cluster?.leader) && replicas.length > 0 && replicas.every((r) => r.current && !r.offline);
    },
    { timeoutMs, intervalMs: 250, what: `every replica of ${durable ? `${stream}/${durable}` : stream} to be current` },
  );
}
