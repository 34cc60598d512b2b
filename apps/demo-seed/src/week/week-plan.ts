import { EventSubjects, type RecommendationEventKind, type Traffic } from '#libs/contracts';
import { DEMO_ADS, type DemoAd } from './demo-ads.js';
import { between, seededRandom, type Random } from './random.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

/** One message to publish on EVENTS: its subject, its Nats-Msg-Id (the event's id) and payload. */
export interface DemoMessage {
  subject: string;
  id: string;
  /** When it happened; messages are published in this order. */
  at: number;
  payload: Record<string, unknown>;
}

/** What the week did to one recommendation, for the expected report. */
export interface PlannedRecommendation {
  id: string;
  traffic: Traffic;
  createdAt: number;
  /** Highest kind published: generated 0, shown/mentioned 1, clicked 2, engaged 3, converted 4. */
  level: number;
  billable: boolean;
  /** The accounting entries published for it. */
  entries: { amount_micros: number; currency: string | null; recordedAt: number }[];
}

export interface PlannedEntry {
  traffic: Traffic;
  amount_micros: number;
  currency: string | null;
  recordedAt: number;
}

export interface DemoWeek {
  agentId: string;
  /** In every id: the anchor minute, so that the same anchor always gives the same ids. */
  tag: string;
  /** First and last instants of activity. */
  start: number;
  end: number;
  recommendations: PlannedRecommendation[];
  /** Entries that name no recommendation (they stay under review). */
  unattributed: PlannedEntry[];
  /** The platform's reconciliation watermark (live traffic). */
  reconciledThrough: number;
  messages: DemoMessage[];
}

const LEVEL: Record<RecommendationEventKind, number> = { generated: 0, shown: 1, mentioned: 1, clicked: 2, engaged: 3, converted: 4 };

/**
 * Recommendations per hour at the busiest hour of a weekday; the day cycle scales it (a
 * quiet night around 03:00 UTC, the peak in the afternoon), weekends a little lower.
 */
const PEAK_PER_HOUR = 40;

function dayCycle(at: number): number {
  const date = new Date(at);
  const hour = date.getUTCHours() + date.getUTCMinutes() / 60;
  const daylight = (1 - Math.cos((2 * Math.PI * (hour - 3)) / 24)) / 2;
  const weekend = date.getUTCDay() === 0 || date.getUTCDay() === 6 ? 0.75 : 1;
  return (0.12 + 0.88 * daylight ** 1.5) * weekend;
}

function pickAd(random: Random): DemoAd {
  const total = DEMO_ADS.reduce((sum, ad) => sum + ad.weight, 0);
  let ticket = random() * total;
  for (const ad of DEMO_ADS) {
    ticket -= ad.weight;
    if (ticket < 0) return ad;
  }
  return DEMO_ADS[DEMO_ADS.length - 1];
}

/** Rounds to whole cents of micros (10,000), as a ledger would. */
function cents(micros: number): number {
  return Math.round(micros / 10_000) * 10_000;
}

function compactUtc(at: number): string {
  return new Date(at).toISOString().slice(0, 16).replace(/[-:]/g, '');
}

interface Callback {
  kind: RecommendationEventKind;
  at: number;
  billable: boolean;
}

/**
 * What happens to one recommendation: the callbacks a platform's client sends (some twice or
 * three times: repeated callbacks), at realistic delays after its creation.
 */
function lifecycle(random: Random, createdAt: number, clickRate: number): Callback[] {
  const callbacks: Callback[] = [{ kind: 'generated', at: createdAt + between(random, 20, 400), billable: false }];
  const repeat = (kind: RecommendationEventKind, first: number, billable: boolean) => {
    callbacks.push({ kind, at: first, billable });
    if (random() < 0.22) callbacks.push({ kind, at: first + between(random, 200, 45_000), billable });
    if (random() < 0.04) callbacks.push({ kind, at: first + between(random, 45_000, 600_000), billable });
  };
  const roll = random();
  const shown = roll < 0.86;
  const mentioned = (roll >= 0.86 && roll < 0.9) || (shown && random() < 0.05);
  if (shown) repeat('shown', createdAt + between(random, 800, 20_000), false);
  if (mentioned) repeat('mentioned', createdAt + between(random, 1_000, 30_000), false);
  if (!(shown || mentioned) || random() >= clickRate) return callbacks;
  const clickedAt = createdAt + between(random, 20_000, 10 * MINUTE_MS);
  repeat('clicked', clickedAt, true);
  if (random() >= 0.45) return callbacks;
  const engagedAt = clickedAt + between(random, MINUTE_MS, 30 * MINUTE_MS);
  repeat('engaged', engagedAt, false);
  if (random() >= 0.32) return callbacks;
  repeat('converted', engagedAt + between(random, 10 * MINUTE_MS, 8 * HOUR_MS), true);
  return callbacks;
}

/**
 * A realistic week of one platform's activity ending at `anchor`, the same for the same anchor
 * and platform: about 3,000 live recommendations following a day cycle, each shown or
 * mentioned, some clicked, engaged and converted (with repeated callbacks); the accounting
 * entries of their clicks and sales a few hours later (so the latest are still pending), one
 * of them reversed, one in EUR (its recommendation is excluded from USD earnings), one that
 * names no recommendation (under review); a reconciliation watermark at the start of
 * yesterday; and two short bursts of test traffic.
 */
export function buildDemoWeek(anchor: Date, agentId: string): DemoWeek {
  const end = Math.floor(anchor.getTime() / MINUTE_MS) * MINUTE_MS - MINUTE_MS;
  const start = end - 7 * DAY_MS + HOUR_MS;
  const tag = compactUtc(end + MINUTE_MS);
  const random = seededRandom(0x5eed_d3e0);
  const recommendations: PlannedRecommendation[] = [];
  const messages: DemoMessage[] = [];
  let eventSequence = 0;
  let entrySequence = 0;
  const eventId = () => `evt_demo_${tag}_${String(++eventSequence).padStart(6, '0')}`;
  const entryId = () => `acc_demo_${tag}_${String(++entrySequence).padStart(5, '0')}`;

  const addEntry = (traffic: Traffic, recommendation: PlannedRecommendation | null, amount: number, currency: string | null, recordedAt: number) => {
    if (recordedAt > end) return false; // not recorded yet: the recommendation stays pending
    const id = entryId();
    messages.push({
      subject: EventSubjects.accountingEntry,
      id,
      at: recordedAt,
      payload: {
        entry_id: id,
        agent_id: agentId,
        traffic,
        recommendation_id: recommendation?.id ?? null,
        amount_micros: amount,
        currency,
        recorded_at: new Date(recordedAt).toISOString(),
      },
    });
    recommendation?.entries.push({ amount_micros: amount, currency, recordedAt });
    return true;
  };

  const addRecommendation = (traffic: Traffic, createdAt: number, clickRate: number) => {
    const ad = pickAd(random);
    const recommendation: PlannedRecommendation = {
      id: `rec_demo_${tag}_${String(recommendations.length + 1).padStart(5, '0')}`,
      traffic,
      createdAt,
      level: 0,
      billable: false,
      entries: [],
    };
    recommendations.push(recommendation);
    // Callbacks that would come after the end of the week have not happened yet.
    const callbacks = lifecycle(random, createdAt, clickRate).filter((callback) => callback.at <= end);
    for (const callback of callbacks) {
      const billable = callback.billable && traffic === 'live';
      recommendation.level = Math.max(recommendation.level, LEVEL[callback.kind]);
      recommendation.billable ||= billable;
      const id = eventId();
      messages.push({
        subject: `${EventSubjects.recommendationPrefix}${callback.kind}`,
        id,
        at: callback.at,
        payload: {
          event_id: id,
          recommendation_id: recommendation.id,
          agent_id: agentId,
          traffic,
          recommendation_created_at: new Date(createdAt).toISOString(),
          occurred_at: new Date(callback.at).toISOString(),
          ...(billable ? { billable: true } : {}),
          ad_id: ad.ad_id,
          product_id: ad.product_id,
        },
      });
    }
    if (traffic !== 'live') return;
    // Earnings are recorded hours after the click or sale that earned them.
    const firstClick = callbacks.find((callback) => callback.kind === 'clicked');
    if (firstClick) addEntry('live', recommendation, cents(ad.click_micros * (0.9 + 0.2 * random())), 'USD', firstClick.at + between(random, 2 * HOUR_MS, 5 * HOUR_MS));
    const sale = callbacks.find((callback) => callback.kind === 'converted');
    if (sale) addEntry('live', recommendation, ad.sale_micros, 'USD', sale.at + between(random, 6 * HOUR_MS, 14 * HOUR_MS));
  };

  for (let hour = Math.ceil(start / HOUR_MS) * HOUR_MS; hour < end; hour += HOUR_MS) {
    const count = Math.round(PEAK_PER_HOUR * dayCycle(hour + HOUR_MS / 2) * (0.85 + 0.3 * random()));
    const createdAts = Array.from({ length: count }, () => hour + Math.floor(random() * HOUR_MS)).sort((a, b) => a - b);
    for (const createdAt of createdAts) if (createdAt <= end - 5 * MINUTE_MS) addRecommendation('live', createdAt, 0.09);
  }
  // Someone trying the test key: two short bursts, clicking more than real users do.
  for (const burst of [start + 29 * HOUR_MS, start + 5 * DAY_MS + 2 * HOUR_MS]) {
    for (let i = 0; i < 18; i++) addRecommendation('test', burst + i * 2 * MINUTE_MS + between(random, 0, 90_000), 0.3);
  }

  const live = recommendations.filter((r) => r.traffic === 'live');
  // One sale refunded a day after it was recorded: a reversal of the same amount.
  const refunded = live.find((r) => r.level === 4 && r.entries.length === 2 && r.entries[1].recordedAt + DAY_MS <= end);
  if (refunded) addEntry('live', refunded, -refunded.entries[1].amount_micros, 'USD', refunded.entries[1].recordedAt + DAY_MS);
  // One click paid by a European advertiser in EUR: its recommendation leaves USD earnings.
  const clicked = live.filter((r) => r.level >= 2 && r.level < 4 && r.entries.length === 1);
  const foreign = clicked[Math.floor(clicked.length / 2)];
  if (foreign) addEntry('live', foreign, cents(foreign.entries[0].amount_micros * 0.93), 'EUR', foreign.entries[0].recordedAt + 10 * MINUTE_MS);
  // A goodwill credit booked by hand, naming no recommendation: it stays under review.
  const unattributed: PlannedEntry[] = [];
  const creditAt = start + 3 * DAY_MS + 14 * HOUR_MS;
  if (addEntry('live', null, 1_500_000, 'USD', creditAt)) unattributed.push({ traffic: 'live', amount_micros: 1_500_000, currency: 'USD', recordedAt: creditAt });

  // Accounting has reconciled this platform's entries through the start of yesterday (UTC).
  const reconciledThrough = Math.floor((end - DAY_MS) / DAY_MS) * DAY_MS;
  messages.push({
    subject: EventSubjects.accountingReconciled,
    id: `rcn_demo_${tag}`,
    at: end,
    payload: { event_id: `rcn_demo_${tag}`, traffic: 'live', reconciled_through: new Date(reconciledThrough).toISOString(), agent_id: agentId },
  });

  messages.sort((a, b) => a.at - b.at);
  return { agentId, tag, start, end, recommendations, unattributed, reconciledThrough, messages };
}
