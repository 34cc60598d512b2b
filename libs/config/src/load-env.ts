import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';

/** One invalid setting: the variable and why it was refused (never its value: it may be a secret). */
export interface InvalidSetting {
  name: string;
  reasons: string[];
}

export class ConfigError extends Error {
  /** `NAME: reason`, one entry per failed rule. */
  readonly problems: string[];

  constructor(readonly settings: InvalidSetting[]) {
    const problems = settings.flatMap(({ name, reasons }) => reasons.map((reason) => `${name}: ${reason}`));
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }

  /**
   * What a process prints before it exits for this error: one line per invalid setting,
   * `<process>: invalid setting NAME: why` (the variable's name dropped from the front of
   * class-validator's messages, several reasons joined by "; "), no stack trace.
   */
  lines(process: string): string[] {
    return this.settings.map(({ name, reasons }) => {
      const why = reasons.map((reason) => (reason.startsWith(`${name} `) ? reason.slice(name.length + 1) : reason));
      return `${process}: invalid setting ${name}: ${why.join('; ')}`;
    });
  }
}

function describe(errors: ValidationError[]): InvalidSetting[] {
  return errors.map((error) => {
    const reasons = Object.values(error.constraints ?? {});
    return { name: error.property, reasons: reasons.length > 0 ? reasons : [`${error.property} is invalid`] };
  });
}

/** Environment values are strings; a setting takes the type of its default. */
function coerce(raw: string, defaultValue: unknown): unknown {
  if (typeof defaultValue === 'number') return /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof defaultValue === 'boolean') return raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : raw;
  return raw;
}

/**
 * Reads the environment once into a validated, typed object. This is the only place in the
 * code base that reads process.env: everything else receives the resulting object.
 * Values of secrets never appear in the error, only the names of the variables.
 */
export function loadEnv<T extends object>(
  envClass: new () => T,
  source: NodeJS.ProcessEnv = process.env,
): T {
  const defaults = new envClass() as Record<string, unknown>;
  const declared = new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(envClass, '', true, false)
      .map((metadata) => metadata.propertyName),
  );
  const values: Record<string, unknown> = {};
  for (const name of declared) {
    const raw = source[name];
    if (raw === undefined || raw === '') continue;
    values[name] = coerce(raw, defaults[name]);
  }
  const env = plainToInstance(envClass, values, { exposeDefaultValues: true });
  const errors = validateSync(env, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigError(describe(errors));
  return env;
}
