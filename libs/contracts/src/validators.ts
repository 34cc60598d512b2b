import { applyDecorators } from '@nestjs/common';
import { IsString, MaxLength, ValidateBy, ValidateIf, registerDecorator, type ValidationOptions } from 'class-validator';

// ISO 8601 in UTC with a literal Z, as DESIGN §4 requires of every timestamp. Year 0000 (1 BC)
// parses in JavaScript but PostgreSQL refuses it: invalid here, so it is dead-lettered at once
// instead of failing on every delivery.
const UTC_TIMESTAMP = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z$/;

export function isUtcTimestamp(value: unknown): value is string {
  return typeof value === 'string' && UTC_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
}

export function IsUtcTimestamp(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isUtcTimestamp',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an ISO 8601 UTC timestamp ending in Z`, ...options },
      validator: { validate: (value: unknown) => isUtcTimestamp(value) },
    });
}

/** Integer micros within the range a JavaScript number and a PostgreSQL bigint both hold exactly. */
export function IsSafeInteger(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isSafeInteger',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an integer (micros)`, ...options },
      validator: { validate: (value: unknown) => Number.isSafeInteger(value) },
    });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The JSON payload of an event, or why it is invalid: not UTF-8, not JSON, or text holding a
 * NUL character (`\u0000`), which no PostgreSQL text column can store — refused here so that
 * such an event is dead-lettered as invalid at once rather than failing every delivery.
 */
export function parseEventJson(data: Uint8Array): { ok: true; value: unknown } | { ok: false; reason: string } {
  let text: string;
  try {
    text = utf8.decode(data);
  } catch {
    return { ok: false, reason: 'payload is not valid UTF-8 JSON' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'payload is not valid UTF-8 JSON' };
  }
  if (text.includes('\\u0000')) return { ok: false, reason: 'payload holds a NUL character (\\u0000)' };
  return { ok: true, value };
}

// ───────────── checks of request fields, reported one at a time ─────────────
//
// The gateway's HTTP validation stops at a property's first failing check (class-validator's
// `stopAtFirstError`) and reports that one reason. class-validator runs a property's checks in
// the order they were registered, and stacked `@` decorators register bottom-up; the helpers
// below register theirs in the order they are listed (Nest's applyDecorators), so each reads
// as the sequence of checks it is. A message starting with `$property` is prefixed with the
// property's path (`messages[0].role …`) by the gateway.

/** Fails only when the property is absent: null is a value of the wrong type, not a missing one. */
export function IsPresent(hint?: string): PropertyDecorator {
  return ValidateBy({
    name: 'isPresent',
    validator: { validate: (value: unknown) => value !== undefined, defaultMessage: () => `$property is required.${hint ? ` ${hint}` : ''}` },
  });
}

/** A string that is not empty or blank (other types are another check's to refuse). */
export function IsNotBlank(): PropertyDecorator {
  return ValidateBy({
    name: 'isNotBlank',
    validator: { validate: (value: unknown) => typeof value !== 'string' || value.trim() !== '', defaultMessage: () => '$property must not be empty.' },
  });
}

/** Validated only when present (undefined); unlike IsOptional, null is validated (and refused by a type check). */
export function SkipIfAbsent(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

function text(max: number): PropertyDecorator[] {
  return [IsString({ message: '$property must be a string.' }), MaxLength(max, { message: `$property must be at most ${max} characters.` })];
}

/** A required, non-blank string of at most `max` characters; `hint` follows the "is required" reason. */
export function RequiredText(max: number, hint?: string): PropertyDecorator {
  const [isString, maxLength] = text(max);
  return applyDecorators(IsPresent(hint), isString, IsNotBlank(), maxLength);
}

/** A string of at most `max` characters that must be present but may be empty. */
export function PresentText(max: number): PropertyDecorator {
  return applyDecorators(IsPresent(), ...text(max));
}

/** An optional string of at most `max` characters, then the `then` checks. */
export function OptionalText(max: number, ...then: PropertyDecorator[]): PropertyDecorator {
  return applyDecorators(SkipIfAbsent(), ...text(max), ...then);
}

/** A value as a reason shows it: a JSON string, cut after 64 characters. */
export function shownValue(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text);
}
