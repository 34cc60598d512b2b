import { Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { fastCheckOf, shownValue } from '#libs/contracts';
import { ProblemException } from './problem.js';

/** What the validation found wrong, until the pipe knows where the input came from. */
class InvalidInput {
  constructor(readonly errors: ValidationError[]) {}
}

interface Location {
  slug: 'invalid-query' | 'invalid-body';
  /** `Unsupported <item> "x"`. */
  item: string;
  /** Why a name is unsupported, given the names the DTO has. */
  supported(names: string[]): string;
}

const LOCATIONS: Partial<Record<ArgumentMetadata['type'], Location>> = {
  query: {
    slug: 'invalid-query',
    item: 'query parameter',
    supported: (names) =>
      names.length === 0 ? ': this endpoint takes no query parameters.' : names.length === 1 ? `: ${names[0]} is the only supported parameter.` : `: supported parameters: ${names.join(', ')}.`,
  },
  body: {
    slug: 'invalid-body',
    item: 'field',
    // A long list helps no one: the API reference has it.
    supported: (names) => (names.length === 1 ? `: ${names[0]} is the only field.` : names.length <= 3 ? `: ${and(names)} are its only fields.` : '.'),
  },
};

/** Keys Nest strips from any input before validation: refused as unknown instead of ignored. */
const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'];

const and = (names: string[]) => `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;

const allowedNames = new WeakMap<object, string[]>();

/** The properties of a DTO class, those of its base classes first. */
function namesOf(dto: object | undefined): string[] {
  if (typeof dto !== 'function') return [];
  let names = allowedNames.get(dto);
  if (!names) {
    const metadata = getMetadataStorage().getTargetValidationMetadatas(dto as new () => object, '', true, false);
    const depth = (target: unknown) => {
      let n = 0;
      for (let c = target; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c)) n++;
      return n;
    };
    names = [...new Set([...metadata].sort((a, b) => depth(a.target) - depth(b.target)).map((m) => m.propertyName))];
    allowedNames.set(dto, names);
  }
  return names;
}

function pathOf(parent: string, error: ValidationError): string {
  if (!parent) return error.property;
  return Array.isArray(error.target) && /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
}

/** A message about property `name` (its first word) told about the whole path instead: `messages[0].role must …`. */
function atPath(message: string, path: string): string {
  const name = message.slice(0, message.indexOf(' '));
  const base = path.replace(/\[\d+\]$/, '');
  return path !== name && (base === name || base.endsWith(`.${name}`)) ? path + message.slice(name.length) : message;
}

/**
 * The first reason in validation order: unknown names of a level before its other errors (as
 * class-validator lists them), depth first, one reason only.
 */
function firstReason(errors: ValidationError[], location: Location, parent = ''): string | undefined {
  const unknown = errors.filter((e) => e.constraints?.whitelistValidation);
  if (unknown.length > 0) {
    const names = unknown.slice(0, 5).map((e) => shownValue(e.property)).join(', ');
    const where = parent ? ` in ${parent}` : '';
    const supported = location.supported(namesOf((unknown[0].target as object | undefined)?.constructor));
    return `Unsupported ${location.item}${unknown.length > 1 ? 's' : ''} ${names}${where}${supported}`;
  }
  for (const error of errors) {
    const path = pathOf(parent, error);
    const message = Object.values(error.constraints ?? {})[0];
    if (message) return atPath(message, path);
    const nested = firstReason(error.children ?? [], location, path);
    if (nested) return nested;
  }
  return undefined;
}

/** Types a parameter may be declared with that are not a DTO class (ValidationPipe leaves them alone too). */
const NOT_DTOS: unknown[] = [String, Boolean, Number, Array, Object, Buffer, Date];

function isDto(type: unknown): type is new () => object {
  return typeof type === 'function' && !NOT_DTOS.includes(type);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The gateway's one validation pipe (global): every `@Query()` and `@Body()` DTO is validated
 * by Nest's ValidationPipe with class-validator — unknown names refused (whitelist,
 * forbidNonWhitelisted), values transformed into the DTO — and a failure is answered with
 * today's 422 problem: `invalid-query` or `invalid-body`, with the first reason (a property's
 * checks stop at its first failure). A DTO marked `@FastCheck(check)` skips class-validator
 * when the check accepts the input (the hot path of GET /agent/reporting); the check accepts
 * only what the DTO accepts. What the pipe cannot see of the raw request is RawInputGuard's.
 *
 * Values of custom decorators (the principal) and accepted fast-path input are returned at
 * once, not through a promise: a global pipe runs for every such parameter of every request.
 */
@Injectable()
export class HttpValidationPipe implements PipeTransform {
  private readonly validation = new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: true, value: false },
    exceptionFactory: (errors) => new InvalidInput(errors),
  });

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom') return value;
    const location = LOCATIONS[metadata.type];
    const dto = metadata.metatype;
    if (!location || !isDto(dto)) return this.validation.transform(value, metadata);
    if (fastCheckOf(dto)?.(value)) return Object.assign(new dto(), value);
    if (metadata.type === 'body' && !isPlainObject(value)) throw new ProblemException(location.slug, 'The body must be a JSON object.');
    if (isPlainObject(value)) {
      const reserved = Object.keys(value).filter((key) => RESERVED_KEYS.includes(key));
      if (reserved.length > 0) {
        const names = reserved.map((key) => shownValue(key)).join(', ');
        throw new ProblemException(location.slug, `Unsupported ${location.item}${reserved.length > 1 ? 's' : ''} ${names}${location.supported(namesOf(dto))}`);
      }
    }
    return this.validate(value, metadata, location);
  }

  private async validate(value: unknown, metadata: ArgumentMetadata, location: Location): Promise<unknown> {
    try {
      return await this.validation.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      throw new ProblemException(location.slug, firstReason(error.errors, location) ?? `The ${metadata.type === 'query' ? 'query' : 'body'} is not valid.`);
    }
  }
}
