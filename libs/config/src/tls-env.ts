import { readFileSync } from 'node:fs';
import { isReadableFile } from '#libs/connections';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * A path to a file that exists and is readable now (a CA bundle, a certificate, a key), checked at
 * start. `requiredWith`: the setting that needs this one, named when this one is missing.
 */
export function IsReadableFile(requiredWith?: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isReadableFile',
      validator: {
        validate: isReadableFile,
        defaultMessage: (args) =>
          args?.value === undefined
            ? `${args?.property} must be set with ${requiredWith}`
            : `${args?.property} must be the path of a readable file; there is none at ${JSON.stringify(args?.value)}`,
      },
    },
    options,
  );
}

export { databaseUrl, isReadableFile, natsTls, type NatsTls } from '#libs/connections';

/** ioredis's `tls` option for REDIS_URL / REDIS_TLS_CA_FILE: undefined for a redis:// URL. */
export function redisTls(url: string, caFile: string | undefined): { ca?: Buffer } | undefined {
  if (!url.startsWith('rediss://')) return undefined;
  return caFile ? { ca: readFileSync(caFile) } : {};
}
