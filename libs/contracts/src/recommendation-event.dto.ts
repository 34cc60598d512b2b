import { IsBoolean, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { IsUtcTimestamp } from './validators.js';

export const TRAFFICS = ['live', 'test'] as const;
export type Traffic = (typeof TRAFFICS)[number];

export const RECOMMENDATION_EVENT_KINDS = [
  'generated',
  'shown',
  'mentioned',
  'clicked',
  'engaged',
  'converted',
] as const;
export type RecommendationEventKind = (typeof RECOMMENDATION_EVENT_KINDS)[number];

/** Payload of `events.recommendation.<kind>` (DESIGN §4). The kind is the subject's last token. */
export class RecommendationEventDto {
  @IsString() @MinLength(1) @MaxLength(200)
  event_id: string;

  @IsString() @MinLength(1) @MaxLength(200)
  recommendation_id: string;

  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIn(TRAFFICS)
  traffic: Traffic;

  @IsUtcTimestamp()
  recommendation_created_at: string;

  @IsUtcTimestamp()
  occurred_at: string;

  @IsOptional() @IsBoolean()
  billable?: boolean;

  @IsOptional() @IsString() @MaxLength(200)
  ad_id?: string;

  @IsOptional() @IsString() @MaxLength(200)
  product_id?: string;
}

