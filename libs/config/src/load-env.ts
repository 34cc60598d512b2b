import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

function describe(errors: ValidationError[]): string[] {
  return errors.flatMap((error) =>
    Object.values(error.constraints ?? {}).map((message) => `${error.property}: ${message}`),
  );
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
