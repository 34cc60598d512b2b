import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import {
  EventSubjects,
  PayoutBalanceEventDto,
  PayoutReadinessEventDto,
  PayoutStatementEventDto,
  type PayoutBalance,
  type PayoutReadiness,
  type PayoutStatement,
  parseEventJson,
} from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';

/** A record as stored: the reply shape of the contract (the event's fields, normalized) with its version. */
type Versioned<T> = T & { version: number };
export type BalanceRecord = Versioned<PayoutBalance>;
/** A stored readiness always comes from an event, so it has an updated_at. */
export type ReadinessRecord = Versioned<PayoutReadiness> & { updated_at: string };
export type StatementRecord = Versioned<PayoutStatement>;

export type DecodedPayoutEvent =
  | { type: 'balance'; record: BalanceRecord }
  | { type: 'readiness'; record: ReadinessRecord }
  | { type: 'statement'; record: StatementRecord }
  | { type: 'invalid'; reason: string };


function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const own = Object.values(e.constraints ?? {}).map((text) => (prefix ? `${prefix}.${text}` : text));
    const nested = describe(e.children ?? [], prefix ? `${prefix}.${e.property}` : e.property);
    return own.length + nested.length > 0 ? [...own, ...nested] : [`${prefix ? `${prefix}.` : ''}${e.property} is invalid`];
  });
}

function validated<T extends object>(dtoClass: new () => T, payload: unknown): T | string {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'payload must be a JSON object';
  const dto = plainToInstance(dtoClass, payload);
  const errors = validateSync(dto, { whitelist: false, forbidUnknownValues: false });
  return errors.length > 0 ? describe(errors).join('; ') : dto;
}

/** One timestamp spelling in the read model (milliseconds, Z), whatever precision was sent. */
const iso = (value: string) => new Date(value).toISOString();
const isoOrNull = (value: string | null | undefined) => (value === null || value === undefined ? null : iso(value));
const orNull = <T>(value: T | null | undefined): T | null => (value === undefined ? null : value);

/** Turns one stream message into a normalized record, or the reason it must be dead-lettered. */
export function decodePayoutEvent(message: InboundMessage): DecodedPayoutEvent {
  const { subject } = message;
  if (subject !== EventSubjects.payoutsBalance && subject !== EventSubjects.payoutsReadiness && subject !== EventSubjects.payoutsStatement) {
    return { type: 'invalid', reason: `unknown payout event subject ${subject}` };
  }
  const parsed = parseEventJson(message.data);
  if (!parsed.ok) return { type: 'invalid', reason: parsed.reason };
  const payload = parsed.value;

  if (subject === EventSubjects.payoutsBalance) {
    const e = validated(PayoutBalanceEventDto, payload);
    if (typeof e === 'string') return { type: 'invalid', reason: e };
    return {
      type: 'balance',
      record: {
        agent_id: e.agent_id,
        currency: e.currency,
        pending_micros: e.pending_micros,
        available_micros: e.available_micros,
        locked_micros: e.locked_micros,
        paid_out_micros: e.paid_out_micros,
        updated_at: iso(e.updated_at),
        version: e.version,
      },
    };
  }

  if (subject === EventSubjects.payoutsReadiness) {
    const e = validated(PayoutReadinessEventDto, payload);
    if (typeof e === 'string') return { type: 'invalid', reason: e };
    return {
      type: 'readiness',
      record: {
        agent_id: e.agent_id,
        setup_status: e.setup_status,
        missing_fields: [...e.missing_fields],
        thresholds: e.thresholds.map((t) => ({ currency: t.currency, minimum_payout_micros: t.minimum_payout_micros })),
        blocked_reason: orNull(e.blocked_reason),
        updated_at: iso(e.updated_at),
        version: e.version,
      },
    };
  }

  const e = validated(PayoutStatementEventDto, payload);
  if (typeof e === 'string') return { type: 'invalid', reason: e };
  if (Date.parse(e.period_end) < Date.parse(e.period_start)) {
    return { type: 'invalid', reason: 'period_end must not be before period_start' };
  }
  const t = e.transfer;
  return {
    type: 'statement',
    record: {
      statement_id: e.statement_id,
      agent_id: e.agent_id,
      period_start: iso(e.period_start),
      period_end: iso(e.period_end),
      currency: e.currency,
      status: e.status,
      gross_earnings_micros: orNull(e.gross_earnings_micros),
      service_fee_micros: orNull(e.service_fee_micros),
      net_earnings_micros: orNull(e.net_earnings_micros),
      blocked_reason: orNull(e.blocked_reason),
      failure: e.failure ? { code: e.failure.code, message: e.failure.message } : null,
      transfer: t
        ? {
            transfer_reference: t.transfer_reference,
            status: t.status,
            initiated_at: isoOrNull(t.initiated_at),
            settled_at: isoOrNull(t.settled_at),
            source_currency: t.source_currency,
            source_amount_micros: orNull(t.source_amount_micros),
            target_currency: orNull(t.target_currency),
            amount_received_micros: orNull(t.amount_received_micros),
            fee_micros: orNull(t.fee_micros),
            exchange_rate: orNull(t.exchange_rate),
          }
        : null,
      created_at: iso(e.created_at),
      updated_at: iso(e.updated_at),
      version: e.version,
    },
  };
}
