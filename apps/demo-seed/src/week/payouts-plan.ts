import { EventSubjects } from '#libs/contracts';
import { DAY_MS, HOUR_MS, MINUTE_MS, type DemoMessage, type DemoWeek } from './week-plan.js';

export interface DemoBalance {
  currency: string;
  pending_micros: number;
  available_micros: number;
  locked_micros: number;
  paid_out_micros: number;
}

export interface DemoPayouts {
  messages: DemoMessage[];
  /** The balance's latest version. */
  balance: DemoBalance;
  setupStatus: string;
  /** Each statement's latest status. */
  statements: { statement_id: string; status: string; net_earnings_micros: number }[];
}

/** Balance earned before the week and not yet in a statement. */
const CARRIED_AVAILABLE_MICROS = 23_460_000;

interface StatementPlan {
  gross: number;
  versions: { status: 'LOCKED' | 'PAID' | 'FAILED'; after: number; transfer?: 'in_transit' | 'settled' }[];
  targetCurrency?: string;
}

/** Four weekly statements before the week: paid (in EUR), paid, failed, locked. */
const STATEMENTS: StatementPlan[] = [
  {
    gross: 571_840_000,
    targetCurrency: 'EUR',
    versions: [
      { status: 'LOCKED', after: DAY_MS + 2 * HOUR_MS },
      { status: 'PAID', after: 3 * DAY_MS + 10 * HOUR_MS, transfer: 'in_transit' },
      { status: 'PAID', after: 5 * DAY_MS + 9 * HOUR_MS + 30 * MINUTE_MS, transfer: 'settled' },
    ],
  },
  {
    gross: 548_320_000,
    targetCurrency: 'USD',
    versions: [
      { status: 'LOCKED', after: DAY_MS + 2 * HOUR_MS },
      { status: 'PAID', after: 3 * DAY_MS + 10 * HOUR_MS, transfer: 'settled' },
    ],
  },
  {
    gross: 602_110_000,
    versions: [
      { status: 'LOCKED', after: DAY_MS + 2 * HOUR_MS },
      { status: 'FAILED', after: 3 * DAY_MS + 11 * HOUR_MS },
    ],
  },
  { gross: 589_870_000, versions: [{ status: 'LOCKED', after: DAY_MS + 2 * HOUR_MS }] },
];

const iso = (at: number) => new Date(at).toISOString();

/**
 * The payout read model's events for the demo week (events.payouts.*, DESIGN §4): readiness
 * that was blocked by a closed bank account and is complete again, four weekly statements
 * (one paid in EUR, one paid, one failed, one locked; each version a new event), and a USD
 * balance updated every morning from the week's recorded earnings (pending for 48 hours,
 * then available). Versions rise per record, so a second run changes nothing.
 */
export function buildDemoPayouts(week: DemoWeek): DemoPayouts {
  const { agentId, tag } = week;
  const messages: DemoMessage[] = [];
  const firstDay = Math.floor(week.start / DAY_MS) * DAY_MS;

  const readiness = [
    { at: week.start + 2 * HOUR_MS, setup_status: 'in_progress', missing_fields: ['bank_account'], blocked_reason: 'The payout bank account was closed by the bank' },
    { at: week.start + DAY_MS + 5 * HOUR_MS, setup_status: 'complete', missing_fields: [], blocked_reason: null },
  ];
  readiness.forEach(({ at, ...state }, index) =>
    messages.push({
      subject: EventSubjects.payoutsReadiness,
      id: `pay_demo_${tag}_readiness_v${index + 1}`,
      at,
      payload: {
        agent_id: agentId,
        ...state,
        thresholds: [
          { currency: 'USD', minimum_payout_micros: 50_000_000 },
          { currency: 'EUR', minimum_payout_micros: 50_000_000 },
        ],
        updated_at: iso(at),
        version: index + 1,
      },
    }),
  );

  const statements: DemoPayouts['statements'] = [];
  const net = STATEMENTS.map((plan) => plan.gross - plan.gross / 10);
  STATEMENTS.forEach((plan, index) => {
    const periodEnd = firstDay - (STATEMENTS.length - 1 - index) * 7 * DAY_MS;
    const periodStart = periodEnd - 7 * DAY_MS;
    const statementId = `stmt_demo_${tag}_${index + 1}`;
    const createdAt = periodEnd + plan.versions[0].after;
    plan.versions.forEach((version, v) => {
      const at = periodEnd + version.after;
      const paidAt = periodEnd + (plan.versions.find((x) => x.status === 'PAID')?.after ?? 0);
      const eur = plan.targetCurrency === 'EUR';
      messages.push({
        subject: EventSubjects.payoutsStatement,
        id: `pay_demo_${tag}_statement_${index + 1}_v${v + 1}`,
        at,
        payload: {
          statement_id: statementId,
          agent_id: agentId,
          period_start: iso(periodStart),
          period_end: iso(periodEnd),
          currency: 'USD',
          status: version.status,
          gross_earnings_micros: plan.gross,
          service_fee_micros: plan.gross / 10,
          net_earnings_micros: net[index],
          blocked_reason: null,
          failure: version.status === 'FAILED' ? { code: 'account_closed', message: 'The beneficiary bank account is closed; update the payout details' } : null,
          transfer: version.transfer
            ? {
                transfer_reference: `tr_demo_${tag}_${index + 1}`,
                status: version.transfer,
                initiated_at: iso(paidAt),
                settled_at: version.transfer === 'settled' ? iso(at) : null,
                source_currency: 'USD',
                source_amount_micros: net[index],
                target_currency: plan.targetCurrency,
                amount_received_micros: eur ? Math.round((net[index] - 250_000) * 0.9412) : net[index],
                fee_micros: eur ? 250_000 : 0,
                exchange_rate: eur ? '0.9412' : null,
              }
            : null,
          created_at: iso(createdAt),
          updated_at: iso(at),
          version: v + 1,
        },
      });
    });
    statements.push({ statement_id: statementId, status: plan.versions[plan.versions.length - 1].status, net_earnings_micros: net[index] });
  });

  // USD earnings as accounting recorded them (the EUR entry is paid out apart).
  const usd = [...week.recommendations.flatMap((r) => (r.traffic === 'live' ? r.entries : [])), ...week.unattributed].filter((e) => e.currency === 'USD');
  const lockedSince = firstDay + STATEMENTS[STATEMENTS.length - 1].versions[0].after;
  let balance: DemoBalance | undefined;
  for (let version = 1, at = firstDay + DAY_MS + 6 * HOUR_MS; at <= week.end; version++, at += DAY_MS) {
    const recorded = usd.filter((e) => e.recordedAt <= at);
    const pending = recorded.filter((e) => e.recordedAt > at - 2 * DAY_MS).reduce((sum, e) => sum + e.amount_micros, 0);
    const settled = recorded.filter((e) => e.recordedAt <= at - 2 * DAY_MS).reduce((sum, e) => sum + e.amount_micros, 0);
    const lastLocked = at >= lockedSince ? net[3] : 0;
    balance = {
      currency: 'USD',
      pending_micros: pending,
      available_micros: CARRIED_AVAILABLE_MICROS + net[3] - lastLocked + settled,
      locked_micros: net[2] + lastLocked,
      paid_out_micros: net[0] + net[1],
    };
    messages.push({
      subject: EventSubjects.payoutsBalance,
      id: `pay_demo_${tag}_balance_usd_v${version}`,
      at,
      payload: { agent_id: agentId, ...balance, updated_at: iso(at), version },
    });
  }

  return {
    messages: messages.sort((a, b) => a.at - b.at),
    balance: balance ?? { currency: 'USD', pending_micros: 0, available_micros: CARRIED_AVAILABLE_MICROS, locked_micros: net[2] + net[3], paid_out_micros: net[0] + net[1] },
    setupStatus: readiness[readiness.length - 1].setup_status,
    statements,
  };
}
