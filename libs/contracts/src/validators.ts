import { registerDecorator, type ValidationOptions } from 'class-validator';

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
