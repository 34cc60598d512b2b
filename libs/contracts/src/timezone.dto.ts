import { IsString, MaxLength, MinLength, registerDecorator, type ValidationOptions } from 'class-validator';
import { isIanaTimezone } from '#libs/timezones';
import { IsUtcTimestamp } from './validators.js';

/**
 * Timezone settings contracts (issue 3): the rule for IANA names, the request/reply DTOs of
 * `timezone.v1.get` / `timezone.v1.set` and the `settings.timezone.changed` event.
 */

/** The reporting timezone of a platform that never set one (SPEC). */
export const DEFAULT_REPORTING_TIMEZONE = 'UTC';

/** The rule lives in #libs/timezones (no decorators, so pure code such as reporting's periods can use it). */
export { isIanaTimezone };

export function IsIanaTimezone(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isIanaTimezone',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an IANA time zone name such as "Asia/Kathmandu"`, ...options },
      validator: { validate: (value: unknown) => isIanaTimezone(value) },
    });
}

/** Request of `timezone.v1.get`. */
export class TimezoneGetRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;
}

/** Request of `timezone.v1.set`: the gateway has already authenticated the owner. */
export class TimezoneSetRequestDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIanaTimezone()
  reporting_timezone: string;
}

/** Result of both subjects; also the 200 body of PATCH /agent/update-onboarding. */
export interface TimezoneSetting {
  agent_id: string;
  reporting_timezone: string;
  /** When the setting last changed; null while the platform uses the default (never set). */
  updated_at: string | null;
}

/** Result of `timezone.v1.set`: `changed` is false when the value was already in force. */
export interface TimezoneSetResult extends TimezoneSetting {
  updated_at: string;
  changed: boolean;
}

/**
 * `settings.timezone.changed` (stream SETTINGS), published once per actual change with
 * Nats-Msg-Id = event_id. Consumers keep the value with the latest `updated_at`.
 */
export class TimezoneChangedEventDto {
  @IsString() @MinLength(1) @MaxLength(200)
  agent_id: string;

  @IsIanaTimezone()
  reporting_timezone: string;

  @IsUtcTimestamp()
  updated_at: string;

  @IsString() @MinLength(1) @MaxLength(200)
  event_id: string;
}
