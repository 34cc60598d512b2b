import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

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

/**
 * Reads the environment once into a validated, typed object. This is the only place in the
 * code base that reads process.env: everything else receives the resulting object.
 * Values of secrets never appear in the error, only the names of the variables.
 */
export function loadEnv<T extends object>(
  envClass: new () => T,
  source: NodeJS.ProcessEnv = process.env,
): T {
  const defined = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const env = plainToInstance(envClass, defined, {
    enableImplicitConversion: true,
    exposeDefaultValues: true,
  });
  const errors = validateSync(env, { whitelist: false, forbidUnknownValues: false });
  if (errors.length > 0) throw new ConfigError(describe(errors));
  return env;
}
