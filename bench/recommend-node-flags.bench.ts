/**
 * V8 flags of the gateway and the recommendations service, compared in one run under the same
 * load: two gateways and two recommendations replicas (one NATS queue group, as in production),
 * side A started with FLAGS_A and side B with FLAGS_B, on one generated catalog. Each gateway
 * gets half of the connections; each replica answers about half of the questions, whichever
 * gateway asked. Per round: the CPU of each process (from /proc) per answer it handled (the
 * replicas' weave_recommendations_answers_total, the gateways' requests), each gateway's p99,
 * and the RSS of all four.
 *
 * Why both sides at once: on a machine shared with other jobs, two runs of bench:recommend taken
 * in turn differ by ±30 % in Node CPU per answer, more than most flags change; two processes
 * running side by side under the same load differ by a few percent (an A/A run shows how many).
 *
 *   node dist/bench/recommend-node-flags.bench.js [DATABASE_URL]   (after npm run -s build:bench;
 *     default: a fresh database with SIZE ads, loaded by catalog-load.ts)
 *   FLAGS_A='' FLAGS_B='--max-semi-space-size=32' SIZE=100000 CONNECTIONS=50 WARMUP=10 DURATION=20 ROUNDS=3
 */
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { REDIS_URL, freePort, newTestDatabase, startNats } from '../test/support/index.js';
import { prng } from '../test/support/prng.js';
import { CATEGORY_NAMES, questionAbout } from './catalog-generator.js';
import { loadCatalog } from './catalog-load.js';
import { autocannon, cpuOf, metricSum, residentMemory, scrapeMetrics, startChild, waitForHttp, type Child } from './harness.js';
import { machine, setting } from './support.js';

const SIZE = setting('SIZE', 100_000);
const CONNECTIONS = setting('CONNECTIONS', 50);
const WARMUP = setting('WARMUP', 10);
const SECONDS = setting('DURATION', 20);
const ROUNDS = setting('ROUNDS', 3);
const SIDES = ['A', 'B'] as const;
type Side = (typeof SIDES)[number];
const FLAGS: Record<Side, string[]> = {
  A: (process.env.FLAGS_A ?? '').split(' ').filter(Boolean),
  B: (process.env.FLAGS_B ?? '--max-semi-space-size=32').split(' ').filter(Boolean),
};
const run = promisify(execFile);

interface SideProcesses {
  recommendations: Child;
  gateway: Child;
  recommendationsPort: number;
  gatewayPort: number;
}

/** The replica's answers so far, whatever their outcome (its /metrics). */
async function answered(port: number): Promise<number> {
  // No sample before the first answer: none so far.
  return metricSum(await scrapeMetrics(`http://127.0.0.1:${port}/metrics`), 'weave_recommendations_answers_total') || 0;
}

async function main() {
  console.log(`machine: ${machine()}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} at ${new Date().toISOString()}`);
  const given = process.argv[2];
  const db = given ? undefined : newTestDatabase();
  const databaseUrl = given ?? db!.url;
  if (db) console.log(`${SIZE.toLocaleString('en-US')} ads loaded in ${Math.round(await loadCatalog(databaseUrl, SIZE))} s`);
  const nats = await startNats();
  const children: Child[] = [];
  try {
    const common = { NATS_URL: nats.url, DATABASE_URL: databaseUrl, REDIS_URL, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
    const sides = {} as Record<Side, SideProcesses>;
    for (const side of SIDES) {
      const recommendationsPort = await freePort();
      const recommendations = startChild(`recommendations ${side}`, 'dist/apps/recommendations/src/main.js', { ...common, RECOMMENDATIONS_HTTP_PORT: recommendationsPort }, [], FLAGS[side]);
      children.push(recommendations);
      await waitForHttp(`http://127.0.0.1:${recommendationsPort}/health/ready`, { child: recommendations });
      const gatewayPort = await freePort();
      const gateway = startChild(`gateway ${side}`, 'dist/apps/gateway/src/main.js', { ...common, PORT: gatewayPort, TRACKING_SIGNING_SECRET: 'bench-recommend-tracking-signing-secret' }, [], FLAGS[side]);
      children.push(gateway);
      await waitForHttp(`http://127.0.0.1:${gatewayPort}/health/ready`, { child: gateway });
      sides[side] = { recommendations, gateway, recommendationsPort, gatewayPort };
    }
    const ops = async (...args: string[]) =>
      JSON.parse((await run(process.execPath, ['dist/apps/ops/src/main.js', ...args], { env: { ...process.env, ...common }, timeout: 120_000 })).stdout) as Record<string, unknown>;
    const agent = `agent_bench_flags_${process.pid}`;
    await ops('platform', 'create', '--agent-id', agent);
    const { api_key: apiKey } = (await ops('key', 'create', '--agent-id', agent, '--mode', 'live')) as { api_key: string };

    const rng = prng(Date.now() % 2 ** 31);
    let n = 0;
    const load = (side: Side, seconds: number) =>
      autocannon({
        url: `http://127.0.0.1:${sides[side].gatewayPort}/agent/recommend`,
        connections: Math.max(1, Math.round(CONNECTIONS / 2)),
        duration: seconds,
        timeout: 10,
        requests: [
          {
            method: 'POST',
            headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
            setupRequest: (request) => {
              n++;
              const query = questionAbout(rng, Math.floor(rng() * CATEGORY_NAMES.length));
              return { ...request, method: 'POST', body: JSON.stringify({ session_id: `ses_bench_flags_${process.pid}_${n}`, message_id: `msg_${n}`, query }) };
            },
          },
        ],
      });

    console.log(`A: ${FLAGS.A.join(' ') || '(V8 defaults)'}; B: ${FLAGS.B.join(' ') || '(V8 defaults)'}; ${CONNECTIONS} connections (half per gateway), ${SECONDS} s rounds after ${WARMUP} s warm-up`);
    await Promise.all(SIDES.map((side) => load(side, WARMUP)));
    console.log('| round | recommendations µs per answer A / B | gateway µs per request A / B | gateway p99 A / B | answers A / B | RSS recommendations A / B | RSS gateway A / B | load average |');
    console.log('| - | - | - | - | - | - | - | - |');
    const processes = SIDES.flatMap((side) => [sides[side].recommendations, sides[side].gateway]);
    for (let round = 1; round <= ROUNDS; round++) {
      const cpuBefore = cpuOf(processes);
      const answersBefore = await Promise.all(SIDES.map((side) => answered(sides[side].recommendationsPort)));
      const results = await Promise.all(SIDES.map((side) => load(side, SECONDS)));
      const cpuAfter = cpuOf(processes);
      const answers = (await Promise.all(SIDES.map((side) => answered(sides[side].recommendationsPort)))).map((count, i) => count - answersBefore[i]);
      const perUs = (i: number, count: number) => Math.round(((cpuAfter[i] - cpuBefore[i]) * 1e6) / Math.max(1, count));
      const rss = await Promise.all(processes.map(async (child) => Math.round((await residentMemory(child)).rss / 2 ** 20)));
      console.log(
        `| ${round} | ${perUs(0, answers[0])} / ${perUs(2, answers[1])} | ${perUs(1, results[0].requests.total)} / ${perUs(3, results[1].requests.total)} | ` +
          `${results[0].latency.p99} / ${results[1].latency.p99} ms | ${answers[0]} / ${answers[1]} | ${rss[0]} / ${rss[2]} MB | ${rss[1]} / ${rss[3]} MB | ${loadavg()[0].toFixed(1)} |`,
      );
    }
  } finally {
    for (const child of children.reverse()) await child.stop();
    await nats.stop();
    await db?.drop();
  }
}

await main();
