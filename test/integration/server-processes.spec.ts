import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { NatsServer, RedisServer, probeNats, probeRedis } from '#libs/servers';
import { freePort, onFreePort } from '../support/index.js';

/**
 * The server processes of #libs/servers (the launcher of `npm start` and the tests start
 * nats-server and redis-server through them) are ready when THEIR process answers. A port is
 * chosen free and bound a moment later; when another server took it in between, that one's
 * answer must not pass for ours: start() fails with the bind error instead of resolving while
 * our process has exited, and onFreePort starts on another port.
 */

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'weave-server-processes-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it('a nats-server whose port another nats-server holds fails at start with the bind error', async () => {
  const port = await freePort();
  const first = new NatsServer({ port, storeDir: join(dir, 'nats-first'), program: process.env.NATS_SERVER_BIN });
  await first.start();
  const second = new NatsServer({ port, storeDir: join(dir, 'nats-second'), program: process.env.NATS_SERVER_BIN });
  try {
    await expect(second.start()).rejects.toThrow(/nats-server exited at start: .*address already in use/i);
    expect(second.running()).toBe(false);
    // The probe knows the first by its name, and the second's name is nobody's.
    expect((await probeNats(first.url, 1000)).ok).toBe(true);
    const nc = await connect({ servers: first.url });
    const name = nc.info?.server_name;
    await nc.close();
    expect(name).toMatch(/^nats-[0-9a-f]{12}$/);
    expect((await probeNats(first.url, 1000, undefined, name)).ok).toBe(true);
    const other = await probeNats(first.url, 1000, undefined, 'nats-someone-else');
    expect(other.ok).toBe(false);
    expect(String((other as { error: unknown }).error)).toMatch(/answered by another nats-server/);
  } finally {
    await second.stop();
    await first.stop();
  }
});

it('a redis-server whose port another redis-server holds fails at start with the bind error', async () => {
  const port = await freePort();
  const first = new RedisServer({ port, dir, program: process.env.REDIS_SERVER_BIN });
  await first.start();
  const second = new RedisServer({ port, dir, program: process.env.REDIS_SERVER_BIN });
  try {
    await expect(second.start()).rejects.toThrow(/redis-server exited at start: .*address already in use/i);
    expect(second.running()).toBe(false);
    expect((await probeRedis(first.url, 1000, first.pid)).ok).toBe(true);
    const other = await probeRedis(first.url, 1000, first.pid! + 1);
    expect(other.ok).toBe(false);
    expect(String((other as { error: unknown }).error)).toMatch(/answered by another redis-server/);
  } finally {
    await second.stop();
    await first.stop();
  }
});

it('onFreePort starts on another port when the first one was taken before the server bound it', async () => {
  const taken = new NatsServer({ port: await freePort(), storeDir: join(dir, 'nats-taken'), program: process.env.NATS_SERVER_BIN });
  await taken.start();
  const tried: number[] = [];
  let started: NatsServer | undefined;
  try {
    const takenPort = Number(new URL(taken.url).port);
    const port = await onFreePort(async (free) => {
      // The first try is handed the taken port, as if another worker had bound it meanwhile.
      const port = tried.length === 0 ? takenPort : free;
      tried.push(port);
      const server = new NatsServer({ port, storeDir: join(dir, `nats-${tried.length}`), program: process.env.NATS_SERVER_BIN });
      await server.start();
      started = server;
      return port;
    });
    expect(tried).toHaveLength(2);
    expect(tried[0]).toBe(takenPort);
    expect(port).toBe(tried[1]);
    expect(port).not.toBe(takenPort);
    expect(started?.running()).toBe(true);
  } finally {
    await started?.stop();
    await taken.stop();
  }
});
