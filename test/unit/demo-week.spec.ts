import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import {
  AccountingEntryDto,
  PayoutBalanceEventDto,
  PayoutReadinessEventDto,
  PayoutStatementEventDto,
  RecommendationEventDto,
  ReconciliationWatermarkDto,
} from '#libs/contracts';
import { buildDemoPayouts } from '../../apps/demo-seed/src/week/payouts-plan.js';
import { expectedReport } from '../../apps/demo-seed/src/week/expected-report.js';
import { DAY_MS, MINUTE_MS, buildDemoWeek, type DemoMessage } from '../../apps/demo-seed/src/week/week-plan.js';
import { referenceReport, type ModelEvent } from '../support/reference-model.js';

/**
 * The week `npm run demo` publishes: identical for the same anchor (so a re-run adds nothing),
 * valid against the event contracts, shaped like real traffic, and the figures the demo prints
 * are those of the independent reference model of the counting rules.
 */
const anchor = new Date('2026-11-26T08:52:31.417Z');
const week = buildDemoWeek(anchor, 'agent_demo');
const payouts = buildDemoPayouts(week);
const messages = [...week.messages, ...payouts.messages];

function toModelEvent(message: DemoMessage): ModelEvent | undefined {
  const payload = message.payload;
  if (message.subject.startsWith('events.recommendation.')) {
    return { type: 'recommendation', kind: message.subject.split('.')[2], ...payload } as ModelEvent;
  }
  if (message.subject === 'events.accounting.entry') return { type: 'accounting', ...payload } as ModelEvent;
  if (message.subject === 'events.accounting.reconciled') return { type: 'reconciled', ...payload } as ModelEvent;
  return undefined;
}

describe('the demo week', () => {
  it('is the same for every anchor within the same minute, and another week for another minute', () => {
    const again = buildDemoWeek(new Date('2026-11-26T08:52:59.999Z'), 'agent_demo');
    expect(JSON.stringify(again)).toBe(JSON.stringify(week));
    expect(JSON.stringify(buildDemoPayouts(again))).toBe(JSON.stringify(payouts));
    const later = buildDemoWeek(new Date('2026-11-26T08:53:00.000Z'), 'agent_demo');
    expect(later.messages[0].id).not.toBe(week.messages[0].id);
  });

  it('gives every message its own id, which is the Nats-Msg-Id and the event id of the payload', () => {
    expect(new Set(messages.map((m) => m.id)).size).toBe(messages.length);
    for (const message of week.messages) {
      const payload = message.payload as { event_id?: string; entry_id?: string };
      expect(payload.event_id ?? payload.entry_id).toBe(message.id);
    }
  });

  it('publishes only payloads the contracts accept (DESIGN §4)', () => {
    const dtoOf = (subject: string) =>
      subject.startsWith('events.recommendation.')
        ? RecommendationEventDto
        : ({
            'events.accounting.entry': AccountingEntryDto,
            'events.accounting.reconciled': ReconciliationWatermarkDto,
            'events.payouts.balance': PayoutBalanceEventDto,
            'events.payouts.readiness': PayoutReadinessEventDto,
            'events.payouts.statement': PayoutStatementEventDto,
          } as Record<string, new () => object>)[subject];
    const invalid = messages.filter((m) => validateSync(plainToInstance(dtoOf(m.subject), m.payload) as object).length > 0);
    expect(invalid).toEqual([]);
  });

  it('is a week of activity before the anchor, following a day cycle', () => {
    expect(week.end - week.start).toBe(7 * DAY_MS - 60 * 60_000);
    expect(messages.every((m) => m.at <= anchor.getTime())).toBe(true);
    expect(week.recommendations.length).toBeGreaterThan(2000);
    const byHour = new Array(24).fill(0);
    for (const r of week.recommendations) if (r.traffic === 'live') byHour[new Date(r.createdAt).getUTCHours()] += 1;
    const night = byHour.slice(0, 6).reduce((a, b) => a + b, 0);
    const afternoon = byHour.slice(12, 18).reduce((a, b) => a + b, 0);
    expect(afternoon).toBeGreaterThan(4 * night);
  });

  it('has repeated callbacks, every kind, a reversal, one foreign-currency entry, one unattributed entry and a watermark', () => {
    const callbacks = new Map<string, number>();
    for (const m of week.messages.filter((x) => x.subject.startsWith('events.recommendation.'))) {
      const key = `${(m.payload as { recommendation_id: string }).recommendation_id} ${m.subject}`;
      callbacks.set(key, (callbacks.get(key) ?? 0) + 1);
    }
    expect([...callbacks.values()].some((n) => n > 1)).toBe(true);
    const subjects = new Set(messages.map((m) => m.subject));
    for (const kind of ['generated', 'shown', 'mentioned', 'clicked', 'engaged', 'converted']) expect(subjects).toContain(`events.recommendation.${kind}`);
    const entries = week.messages.filter((m) => m.subject === 'events.accounting.entry').map((m) => m.payload as { amount_micros: number; currency: string; recommendation_id: string | null });
    expect(entries.filter((e) => e.amount_micros < 0)).toHaveLength(1);
    expect(entries.filter((e) => e.currency !== 'USD')).toHaveLength(1);
    expect(entries.filter((e) => e.recommendation_id === null)).toHaveLength(1);
    expect(week.messages.filter((m) => m.subject === 'events.accounting.reconciled')).toHaveLength(1);
  });

  it('prints the report the counting rules give: expectedReport equals the reference model for each traffic and range', () => {
    const events = messages.map(toModelEvent).filter((e): e is ModelEvent => e !== undefined);
    const end = Math.floor(anchor.getTime() / MINUTE_MS) * MINUTE_MS + 10 * MINUTE_MS;
    for (const traffic of ['live', 'test'] as const) {
      for (const start of [null, end - 7 * DAY_MS, end - DAY_MS, end - 4 * DAY_MS]) {
        const { reconciled_through, ...model } = referenceReport(events, { agent_id: 'agent_demo', traffic, start: start === null ? null : new Date(start), end: new Date(end) });
        const { accounting_reconciled_through, ...expected } = expectedReport(week, traffic, start, end);
        expect({ traffic, start, ...expected }).toEqual({ traffic, start, ...model });
        expect(accounting_reconciled_through).toBe(reconciled_through?.toISOString() ?? null);
      }
    }
    const live = expectedReport(week, 'live', null, end);
    expect(live).toMatchObject({ earnings_excluded_recommendations: 1, accounting_review_required: 1 });
    expect(live.conversions).toBeGreaterThan(0);
    expect(live.pending_earnings_recommendations).toBeGreaterThan(0);
  });

  it('updates payout records with rising versions and ends with paid, failed and locked statements and a balance', () => {
    const versions = new Map<string, number[]>();
    for (const m of payouts.messages) {
      const p = m.payload as { statement_id?: string; currency?: string; version: number };
      const record = `${m.subject} ${p.statement_id ?? p.currency ?? ''}`;
      versions.set(record, [...(versions.get(record) ?? []), p.version]);
    }
    for (const list of versions.values()) expect(list).toEqual(list.map((_, i) => i + 1));
    expect(payouts.statements.map((s) => s.status)).toEqual(['PAID', 'PAID', 'FAILED', 'LOCKED']);
    expect(payouts.setupStatus).toBe('complete');
    const eurTransfer = payouts.messages.find((m) => (m.payload as { transfer?: { target_currency?: string } | null }).transfer?.target_currency === 'EUR');
    expect(eurTransfer).toBeDefined();
    expect(payouts.balance.available_micros).toBeGreaterThan(0);
  });
});
