import { registerDecorator, type ValidationOptions } from 'class-validator';

// ISO 8601 in UTC with a literal Z, as DESIGN §4 requires of every timestamp.
const UTC_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z$/;

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
