import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { DataSource } from 'typeorm';
import { Streams } from '#libs/contracts';
import { NatsClient, publishDeadLetter } from '#libs/nats';
import { connectStackProducer, startReportingProjection, useTestStack, waitFor, type Producer, type ServiceUnderTest } from '../support/index.js';
import type { ReportingProjectionEnv } from '../../apps/reporting-projection/src/config/reporting-projection.env.js';

/**
 * Inspecting and re-driving dead letters with the ops CLI: a letter the projection gave up on
 * is listed with its reason, published again on its subject, applied, and gone from the stream.
 */
const CLI = resolve('dist/apps/ops/src/main.js');

const stack = useTestStack({ streams: true });
let producer: Producer;
let client: NatsClient;
let reporting: ServiceUnderTest<ReportingProjectionEnv>;

function ops(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, DATABASE_URL: stack.db.url, NATS_URL: stack.nats.url }, timeout: 30000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function opsJson<T>(args: string[]): Promise<T> {
  const run = await ops(args);
  if (run.code !== 0) throw new Error(`ops ${args.join(' ')} failed (${run.code}): ${run.stderr}`);
  expect(run.stdout.trim().split('\n')).toHaveLength(1);
  return JSON.parse(run.stdout) as T;
}

type Listing = { dead_letters: { sequence: number; original_subject: string; reason: string; deliveries: number | null; payload: string }[]; stored: number };

beforeAll(async () => {
  producer = await connectStackProducer(stack);
  client = await NatsClient.connect({ servers: [stack.nats.url], name: 'test' });
  stack.atEnd(() => client.drain());
  reporting = stack.track(await startReportingProjection({ ...stack.urls, REPORTING_PUBLISH_INTERVAL_MS: 3_600_000 }));
});

it('lists dead letters with their reasons, re-drives one into the projection, and refuses a second re-drive', async () => {
  const created = new Date(Date.now() - 60_000).toISOString();
  const event = { event_id: 'evt_redrive', recommendation_id: 'rec_redrive', agent_id: 'agent_dl', traffic: 'live', recommendation_created_at: created, occurred_at: created };
  // As the consumer leaves an event whose handling kept failing (e.g. during a bug since fixed).
  await publishDeadLetter(
    client.jetstream,
    { subject: 'events.recommendation.shown', data: new TextEncoder().encode(JSON.stringify(event)), stream: Streams.events, sequence: 4242, deliveries: 5, reason: 'handler failed after 5 deliveries: boom' },
    'retries_exhausted',
  );
  // And one the projection dead-letters itself.
  await producer.publishRaw('events.accounting.entry', '{not json', 'bad_1');
  const listing = await waitFor(async () => {
    const result = await opsJson<Listing>(['deadletters', 'list']);
    return result.dead_letters.length === 2 ? result : undefined;
  }, { what: 'two dead letters' });
  expect(listing.dead_letters.map((l) => [l.original_subject, l.deliveries])).toEqual([
    ['events.recommendation.shown', 5],
    ['events.accounting.entry', 1],
  ]);
  expect(listing.dead_letters[0].reason).toMatch(/boom/);
  expect(listing.dead_letters[1].reason).toMatch(/not valid UTF-8 JSON/);
  expect(listing.dead_letters[1].payload).toBe('{not json');

  const filtered = await opsJson<Listing>(['deadletters', 'list', '--subject', 'events.accounting.entry']);
  expect(filtered.dead_letters.map((l) => l.original_subject)).toEqual(['events.accounting.entry']);

  const sequence = listing.dead_letters[0].sequence;
  const redriven = await opsJson<{ sequence: number; stream: string; duplicate: boolean }>(['deadletters', 'redrive', '--sequence', String(sequence)]);
  expect(redriven).toMatchObject({ sequence, stream: Streams.events, duplicate: false });

  const dataSource = reporting.app.get(DataSource);
  await waitFor(async () => {
    const [row] = await dataSource.query(`SELECT level FROM reporting.recommendation WHERE recommendation_id = 'rec_redrive'`);
    return row?.level === 1;
  }, { what: 're-driven event applied' });
  const after = await opsJson<Listing>(['deadletters', 'list']);
  expect(after.dead_letters.map((l) => l.original_subject)).toEqual(['events.accounting.entry']);

  const again = await ops(['deadletters', 'redrive', '--sequence', String(sequence)]);
  expect(again.code).toBe(1);
  expect(again.stderr).toMatch(/no dead letter with sequence/);
});

it('refuses bad usage with exit code 2', async () => {
  for (const args of [['deadletters', 'redrive'], ['deadletters', 'redrive', '--sequence', '0'], ['deadletters', 'list', '--limit', '5000'], ['deadletters', 'list', '--limit', 'x']]) {
    const run = await ops(args);
    expect({ args, code: run.code }).toEqual({ args, code: 2 });
    expect(run.stdout).toBe('');
  }
});
