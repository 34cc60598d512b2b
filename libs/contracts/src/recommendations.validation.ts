import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength, registerDecorator, type ValidationOptions } from 'class-validator';
import { TRAFFICS, type Traffic } from './recommendation-event.dto.js';
import type { RecommendConversationMessage, RecommendRequest } from './recommendations.dto.js';

/**
 * Validation of `recommendations.v1.recommend` requests (issue 5), as the recommendations
 * service applies it. The gateway validates the HTTP body with its own, stricter limits first;
 * these bounds only keep a malformed or oversized internal request out (they are at least as
 * lenient as the gateway's, so no request the gateway accepted is refused here).
 */
export const RECOMMEND_REQUEST_LIMITS = {
  idLength: 500,
  queryLength: 10000,
  messages: 500,
  messageContentLength: 100000,
  messageRoleLength: 100,
  optionalTextLength: 1000,
} as const;

const MESSAGE_FIELDS = new Set(['role', 'content', 'id']);

/** Whether a value is a conversation history: an array of `{ role, content, id? }` with string fields. */
export function isConversation(value: unknown): value is RecommendConversationMessage[] {
  if (!Array.isArray(value) || value.length > RECOMMEND_REQUEST_LIMITS.messages) return false;
  return value.every((message) => {
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return false;
    const m = message as Record<string, unknown>;
    return (
      Object.keys(m).every((key) => MESSAGE_FIELDS.has(key)) &&
      typeof m.role === 'string' &&
      m.role.length <= RECOMMEND_REQUEST_LIMITS.messageRoleLength &&
      typeof m.content === 'string' &&
      m.content.length <= RECOMMEND_REQUEST_LIMITS.messageContentLength &&
      (m.id === undefined || (typeof m.id === 'string' && m.id.length <= RECOMMEND_REQUEST_LIMITS.idLength))
    );
  });
}

function IsConversation(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isConversation',
      target: target.constructor,
      propertyName: propertyName as string,
      options: {
        message: `${String(propertyName)} must be an array of at most ${RECOMMEND_REQUEST_LIMITS.messages} objects with string role and content (and optional string id)`,
        ...options,
      },
      validator: { validate: (value: unknown) => isConversation(value) },
    });
}

/** Request of `recommendations.v1.recommend`: the HTTP body plus the platform the gateway authenticated. */
export class RecommendRequestDto implements RecommendRequest {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIn(TRAFFICS)
  traffic: Traffic;

  @IsString() @MinLength(1) @MaxLength(RECOMMEND_REQUEST_LIMITS.idLength)
  session_id: string;

  @IsString() @MinLength(1) @MaxLength(RECOMMEND_REQUEST_LIMITS.idLength)
  message_id: string;

  @IsString() @MinLength(1) @MaxLength(RECOMMEND_REQUEST_LIMITS.queryLength)
  query: string;

  /** Effective budget (the gateway defaults and clamps it); the service clamps it again. */
  @IsInt() @Min(1) @Max(600000)
  latency_budget_ms: number;

  @IsString() @MinLength(1) @MaxLength(200)
  request_id: string;

  @IsOptional() @IsConversation()
  messages?: RecommendConversationMessage[];

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  locale?: string;

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  geo?: string;

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  user_id?: string;

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  model?: string;

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  platform_id?: string;

  @IsOptional() @IsString() @MaxLength(RECOMMEND_REQUEST_LIMITS.optionalTextLength)
  platform_surface?: string;
}
