/**
 * JetStream publish benchmark: Node CPU per message and messages per second of a publish that
 * waits for its PubAck, the library's `jetstream.publish(subject, data, { msgID, timeout })`
 * (the reference) against NatsClient.pubAcks (PubAckPublisher: a core publish with a reply
 * subject under one wildcard subscription), in one process against one nats-server, on a file
 * stream with a duplicate window as EVENTS has. Rounds alternate between the two; CONCURRENCY
 * publishes are in flight at a time (3: the `generated` events of one answer), each with its own
 * Nats-Msg-Id. CPU is this process's (process.cpuUsage), so nats-server's does not count; on a
 * loaded machine compare the CPU per message, not the rates.
 *
 *   npm run bench:jetstream-publish     (MESSAGES=20000 ROUNDS=6 CONCURRENCY=3)
 */
import { StorageType, type PubAck } from '@nats-io/jetstream';
import { NatsClient } from '#libs/nats';
import { startNats } from '../test/support/index.js';
import { fmt, machine, median, setting } from './support.js';

const MESSAGES = setting('MESSAGES', 20000);
const ROUNDS = setting('ROUNDS', 6);
const CONCURRENCY = setting('CONCURRENCY', 3);
const TIMEOUT_MS = 2000;

type Variant = 'library' | 'pubAcks';
interface Round {
  cpuMicros: number;
  seconds: number;
}

async function main(): Promise<void> {
  console.log(machine());
  console.log(`${ROUNDS} rounds per variant, alternating, ${fmt(MESSAGES)} messages each, ${CONCURRENCY} in flight at a time\n`);
  const nats = await startNats();
  const client = await NatsClient.connect({ servers: [nats.url], name: 'jetstream-publish-bench' });
  try {
    await client.manager.streams.add({ name: 'BENCH', subjects: ['bench.>'], storage: StorageType.File, duplicate_window: 120_000_000_000 });
    const payload = new TextEncoder().encode(JSON.stringify({ event_id: '0'.repeat(36), kind: 'generated', ad_id: 'ad_000001', score: 0.5 }));
    const publishers: Record<Variant, (subject: string, msgID: string) => Promise<PubAck>> = {
      library: (subject, msgID) => client.jetstream.publish(subject, payload, { msgID, timeout: TIMEOUT_MS }),
      pubAcks: (subject, msgID) => client.pubAcks.publish(subject, payload, { msgID, timeout: TIMEOUT_MS }),
    };
    let id = 0;
    const round = async (variant: Variant, messages: number): Promise<Round> => {
      const publish = publishers[variant];
      const subject = `bench.${variant}`;
      const cpu = process.cpuUsage();
      const started = process.hrtime.bigint();
      for (let sent = 0; sent < messages; sent += CONCURRENCY) {
        const batch: Promise<PubAck>[] = [];
        for (let i = 0; i < CONCURRENCY; i++) batch.push(publish(subject, `m-${id++}`));
        const acks = await Promise.all(batch);
        if (acks.some((ack) => ack.duplicate)) throw new Error('unexpected duplicate');
      }
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const used = process.cpuUsage(cpu);
      return { cpuMicros: (used.user + used.system) / messages, seconds };
    };
    // Warm both paths (JIT, the reply subscription) before measuring.
    await round('library', Math.min(MESSAGES, 3000));
    await round('pubAcks', Math.min(MESSAGES, 3000));
    const results: Record<Variant, Round[]> = { library: [], pubAcks: [] };
    for (let r = 0; r < ROUNDS; r++) {
      const order: Variant[] = r % 2 === 0 ? ['library', 'pubAcks'] : ['pubAcks', 'library'];
      for (const variant of order) results[variant].push(await round(variant, MESSAGES));
    }
    const summary = (variant: Variant) => ({
      cpu: median(results[variant].map((x) => x.cpuMicros)),
      rate: median(results[variant].map((x) => MESSAGES / x.seconds)),
      rounds: results[variant].map((x) => x.cpuMicros.toFixed(1)).join(' '),
    });
    const library = summary('library');
    const ours = summary('pubAcks');
    console.log('variant                      Node CPU µs/msg (median)   msgs/s (median)   per round (µs/msg)');
    console.log(`jetstream.publish (reference) ${library.cpu.toFixed(1).padStart(10)}               ${fmt(library.rate).padStart(10)}     ${library.rounds}`);
    console.log(`NatsClient.pubAcks.publish    ${ours.cpu.toFixed(1).padStart(10)}               ${fmt(ours.rate).padStart(10)}     ${ours.rounds}`);
    console.log(`\npubAcks / reference: CPU per message ${(ours.cpu / library.cpu).toFixed(2)}, msgs/s ${(ours.rate / library.rate).toFixed(2)}`);
  } finally {
    await client.drain();
    await nats.stop();
  }
}

await main();
