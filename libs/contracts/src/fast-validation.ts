import { TRAFFICS } from './recommendation-event.dto.js';
import { TIME_RANGES } from './reporting.dto.js';
import { isUtcTimestamp } from './validators.js';

/**
 * Hot-path pre-checks for the event DTOs. Each accepts only payloads its class-validator DTO
 * also accepts (a property test holds them to that), so a consumer may skip the slower
 * class-validator pass when one says yes, and ask class-validator for the reason when it says
 * no. class-validator stays the single definition of validity.
 */
type Payload = Record<string, unknown>;

const isId = (value: unknown) => typeof value === 'string' && value.length >= 1 && value.length <= 200;
const isOptionalText = (value: unknown) => value === undefined || (typeof value === 'string' && value.length <= 200);
const isTraffic = (value: unknown) => (TRAFFICS as readonly unknown[]).includes(value);
const CURRENCY = /^[A-Z]{3}$/;

function isPlainObject(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function passesRecommendationEventFastCheck(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    isId(value.event_id) &&
    isId(value.recommendation_id) &&
    isId(value.agent_id) &&
    isTraffic(value.traffic) &&
    isUtcTimestamp(value.recommendation_created_at) &&
    isUtcTimestamp(value.occurred_at) &&
    (value.billable === undefined || typeof value.billable === 'boolean') &&
    isOptionalText(value.ad_id) &&
    isOptionalText(value.product_id)
  );
}

export function passesAccountingEntryFastCheck(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    isId(value.entry_id) &&
    isId(value.agent_id) &&
    isTraffic(value.traffic) &&
    (value.recommendation_id === null || isId(value.recommendation_id)) &&
    Number.isSafeInteger(value.amount_micros) &&
    (value.currency === null || (typeof value.currency === 'string' && CURRENCY.test(value.currency))) &&
    isUtcTimestamp(value.recorded_at)
  );
}

const REPORT_REQUEST_KEYS = ['agent_id', 'time_range', 'traffic'];

export function passesReportRequestFastCheck(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const keys = Object.keys(value);
  return (
    keys.length === 3 &&
    keys.every((key) => REPORT_REQUEST_KEYS.includes(key)) &&
    isId(value.agent_id) &&
    isTraffic(value.traffic) &&
    (TIME_RANGES as readonly unknown[]).includes(value.time_range)
  );
}
