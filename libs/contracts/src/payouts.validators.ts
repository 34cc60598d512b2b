import { plainToInstance } from 'class-transformer';
import { registerDecorator, validateSync, type ValidationOptions } from 'class-validator';

// Validation helpers of the payout contracts, for the payouts DTO files only (index.ts does
// not export this file).

export const CURRENCY = /^[A-Z]{3}$/;
export const CURRENCY_MESSAGE = (property: string) => `${property} must be an ISO 4217 code (three capital letters)`;
export const isNullish = (value: unknown) => value === null || value === undefined;

/** A record version: an integer ≥ 0 that a PostgreSQL bigint and a JavaScript number both hold. */
export function IsVersion(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isVersion',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be a non-negative integer`, ...options },
      validator: { validate: (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0 },
    });
}

/** An exchange rate: a positive finite number, or a decimal string (exact, e.g. "0.9231"). */
export function IsExchangeRate(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isExchangeRate',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be a positive number or decimal string, or null`, ...options },
      validator: {
        validate: (value: unknown) =>
          (typeof value === 'number' && Number.isFinite(value) && value > 0) ||
          (typeof value === 'string' && /^\d{1,18}(\.\d{1,18})?$/.test(value) && Number(value) > 0),
      },
    });
}

/**
 * page / page_size: a JSON integer, or the decimal digits of one as a query string carries them
 * (so the gateway may pass query values through and let this DTO be the single validator).
 */
export function IsPageNumber(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isPageNumber',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `${String(propertyName)} must be an integer from ${min} to ${max}`, ...options },
      validator: { validate: (value: unknown) => toPageNumber(value, min, max) !== undefined },
    });
}

export function toPageNumber(value: unknown, min: number, max: number): number | undefined {
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\d{1,16}$/.test(value)) n = Number(value);
  else return undefined;
  return Number.isSafeInteger(n) && n >= min && n <= max ? n : undefined;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The problems of a nested object (or of each element of an array) against its DTO, as full paths. */
function nestedProblems(dto: new () => object, value: unknown, array: boolean, path: string): string[] {
  const items = array ? value : [value];
  if (!Array.isArray(items)) return [`${path} must be an array`];
  return items.flatMap((item, i) => {
    const where = array ? `${path}[${i}]` : path;
    if (!isPlainObject(item)) return [`${where} must be an object`];
    return validateSync(plainToInstance(dto, item), { forbidUnknownValues: false })
      .flatMap((e) => Object.values(e.constraints ?? { [e.property]: `${e.property} is invalid` }))
      .map((text) => `${where}.${text}`);
  });
}

/**
 * Validates a nested object (or array of them) against its DTO. Unlike ValidateNested + @Type,
 * it needs no reflect-metadata at decoration time, so importing the contracts stays free of it.
 */
export function IsNestedDto(dto: () => new () => object, array = false, options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isNestedDto',
      target: target.constructor,
      propertyName: propertyName as string,
      options,
      validator: {
        validate: (value: unknown) => nestedProblems(dto(), value, array, String(propertyName)).length === 0,
        defaultMessage: (args) => nestedProblems(dto(), args?.value, array, String(propertyName)).join('; '),
      },
    });
}
