import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import {
  AccountingEntryDto,
  EventSubjects,
  RECOMMENDATION_EVENT_KINDS,
  RecommendationEventDto,
  ReconciliationWatermarkDto,
  passesAccountingEntryFastCheck,
  passesRecommendationEventFastCheck,
  type RecommendationEventKind,
  parseEventJson,
} from '#libs/contracts';
import type { InboundMessage } from '#libs/nats';
import { levelOfKind } from '../rules/counting.js';

export type DecodedEvent =
  /** `createdAtMs`: the event's recommendation_created_at, parsed once here for every later step. */
  | { type: 'lifecycle'; sequence: number; kind: RecommendationEventKind; level: number; event: RecommendationEventDto; createdAtMs: number }
  /** `recordedAtMs`: the entry's recorded_at, parsed once here. */
  | { type: 'accounting'; sequence: number; entry: AccountingEntryDto; recordedAtMs: number }
  | { type: 'reconciled'; sequence: number; watermark: ReconciliationWatermarkDto }
  /** Subjects of `events.>` that other services consume (payouts). */
  | { type: 'not-ours' }
  | { type: 'invalid'; reason: string };


function describe(errors: ValidationError[]): string {
  return errors
    .flatMap((e) => Object.values(e.constraints ?? { [e.property]: `${e.property} is invalid` }))
    .join('; ');
}

function validated<T extends object>(dtoClass: new () => T, payload: unknown, fastCheck?: (value: unknown) => boolean): T | string {
  if (fastCheck?.(payload)) return payload as T;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return 'payload must be a JSON object';
  const dto = plainToInstance(dtoClass, payload);
  const errors = validateSync(dto, { whitelist: false, forbidUnknownValues: false });
  return errors.length > 0 ? describe(errors) : dto;
}

/** Turns one stream message into a typed event, or the reason it must be dead-lettered. */
export function decodeEvent(message: InboundMessage): DecodedEvent {
  const { subject, sequence } = message;
  const isRecommendation = subject.startsWith(EventSubjects.recommendationPrefix);
  if (!isRecommendation && subject !== EventSubjects.accountingEntry && subject !== EventSubjects.accountingReconciled) {
    if (subject.startsWith('events.payouts.')) return { type: 'not-ours' };
    return { type: 'invalid', reason: `unknown event subject ${subject}` };
  }
  const parsed = parseEventJson(message.data);
  if (!parsed.ok) return { type: 'invalid', reason: parsed.reason };
  const payload = parsed.value;
  if (isRecommendation) {
    const kind = subject.slice(EventSubjects.recommendationPrefix.length);
    if (!(RECOMMENDATION_EVENT_KINDS as readonly string[]).includes(kind)) {
      return { type: 'invalid', reason: `unknown recommendation event kind "${kind}"` };
    }
    const event = validated(RecommendationEventDto, payload, passesRecommendationEventFastCheck);
    if (typeof event === 'string') return { type: 'invalid', reason: event };
    const typedKind = kind as RecommendationEventKind;
    return { type: 'lifecycle', sequence, kind: typedKind, level: levelOfKind(typedKind), event, createdAtMs: Date.parse(event.recommendation_created_at) };
  }
  if (subject === EventSubjects.accountingEntry) {
    const entry = validated(AccountingEntryDto, payload, passesAccountingEntryFastCheck);
    return typeof entry === 'string' ? { type: 'invalid', reason: entry } : { type: 'accounting', sequence, entry, recordedAtMs: Date.parse(entry.recorded_at) };
  }
  const watermark = validated(ReconciliationWatermarkDto, payload);
  return typeof watermark === 'string'
    ? { type: 'invalid', reason: watermark }
    : { type: 'reconciled', sequence, watermark };
}
