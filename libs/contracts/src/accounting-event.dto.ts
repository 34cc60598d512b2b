import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateIf } from 'class-validator';
import { TRAFFICS, type Traffic } from './recommendation-event.dto.js';
import { IsSafeInteger, IsUtcTimestamp } from './validators.js';

/** Payload of `events.accounting.entry` (DESIGN §4). */
export class AccountingEntryDto {
  @IsString() @MinLength(1) @MaxLength(200)
  entry_id: string;

  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIn(TRAFFICS)
  traffic: Traffic;

  /** null: not tied to a recommendation, so it stays under review. */
  @ValidateIf((_, value) => value !== null)
  @IsString() @MinLength(1) @MaxLength(200)
  recommendation_id: string | null;

  /** Negative for a reversal. */
  @IsSafeInteger()
  amount_micros: number;

  /** null: unresolved currency. */
  @ValidateIf((_, value) => value !== null)
  @IsString() @Matches(/^[A-Z]{3}$/, { message: 'currency must be an ISO 4217 code or null' })
  currency: string | null;

  @IsUtcTimestamp()
  recorded_at: string;
}

/** Payload of `events.accounting.reconciled` (DESIGN §4). */
export class ReconciliationWatermarkDto {
  @IsString() @MinLength(1) @MaxLength(200)
  event_id: string;

  @IsIn(TRAFFICS)
  traffic: Traffic;

  @IsUtcTimestamp()
  reconciled_through: string;

  /** Absent: the watermark applies to every platform. */
  @IsOptional() @IsString() @MinLength(1) @MaxLength(200)
  agent_id?: string;
}
