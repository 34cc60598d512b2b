/**
 * The gateway's work on an answer of POST /agent/recommend once the recommendations service has
 * replied, in one process: `RecommendationsService.recommend` with a stub NATS client that
 * answers three ranked entries of the bench catalog's shape at once (a fresh parse of the reply
 * each time, as the client does), i.e. the contract check, the six signed tracking links and the
 * view. CPU per answer from process.cpuUsage, ROUNDS rounds of ANSWERS answers each; no HTTP,
 * no NATS, no Nest router. docs/decisions/recommend-node-cpu-per-answer.md.
 *
 *   npm run -s build:bench && node dist/bench/recommend-view.bench.js      # ANSWERS=40000 ROUNDS=4
 */
import 'reflect-metadata';
import type { ClientProxy } from '@nestjs/microservices';
import { of } from 'rxjs';
import type { RankedRecommendation } from '#libs/contracts';
import type { Logger } from '#libs/observability';
import type { PlatformPrincipal } from '../apps/gateway/src/auth/principal.js';
import type { GatewayEnv } from '../apps/gateway/src/config/gateway.env.js';
import { RecommendationsService } from '../apps/gateway/src/recommendations/recommendations.service.js';
import type { TrackingSecrets } from '../apps/gateway/src/tracking/tracking-secrets.provider.js';
import { TrackingService } from '../apps/gateway/src/tracking/tracking.service.js';
import { machine, setting } from './support.js';

const ANSWERS = setting('ANSWERS', 40_000);
const ROUNDS = setting('ROUNDS', 4);
const SECRET = 'bench-recommend-tracking-signing-secret';

const ranked: RankedRecommendation[] = [0, 1, 2].map((i) => ({
  recommendation_id: `rec_${i}5kQ2m9XcTzAbCdEfGh`,
  ad_id: `ad_gen_00${i}123`,
  product_id: `prod_gen_00${i}123`,
  product_title: `Trail Runner ${i} — lightweight running shoe`,
  landing_url: `https://shop.example.com/products/00${i}123?utm_source=weave`,
  created_at: '2026-11-28T07:47:00.123Z',
  contextual_relevance_score: 87.5 - i,
  creative_input: { short_description: 'Lightweight, cushioned running shoe for long distances.' },
  weave_summary: 'The Trail Runner weighs 220 g and is built for long distances.',
  tail_summary: 'Looking for marathon shoes? Try the Trail Runner.',
}));
const reply = JSON.stringify({ request_id: 'req_bench', query: 'lightweight running shoes for a first marathon', recommendations: ranked });

const silent = { error() {}, warn() {}, info() {}, debug() {} } as unknown as Logger;
const env = { PUBLIC_BASE_URL: 'https://api.weave.example', TRACKING_LINK_TTL_DAYS: 30 } as GatewayEnv;
const secrets: TrackingSecrets = { signing: SECRET, accepted: [SECRET], generated: false };
// Only the signing path of TrackingService is used: its recording collaborators are not needed.
const none = undefined as never;
const tracking = new TrackingService(env, none, none, none, none, none, secrets, silent);
const client = { send: () => of(JSON.parse(reply) as unknown) } as unknown as ClientProxy;
const service = new RecommendationsService(client, tracking, silent);
const principal: PlatformPrincipal = { agent_id: 'agent_bench_recommend', traffic: 'live', key_id: 'key_bench' };
const body = { session_id: 'ses_bench', message_id: 'msg_bench', query: 'lightweight running shoes for a first marathon', latency_budget_ms: 1000 };

console.log(`machine: ${machine()}`);
const check = await service.recommend(principal, body, 'req_bench');
if (check.recommendations.length !== 3) throw new Error('the stub answer was not served');
for (let round = 1; round <= ROUNDS; round++) {
  const before = process.cpuUsage();
  for (let i = 0; i < ANSWERS; i++) await service.recommend(principal, body, 'req_bench');
  const used = process.cpuUsage(before);
  console.log(`round ${round}: ${((used.user + used.system) / ANSWERS).toFixed(1)} µs of CPU per answer of three recommendations (${ANSWERS.toLocaleString('en-US')} answers)`);
}
