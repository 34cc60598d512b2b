import { isIP } from 'node:net';
import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * The entries of a comma-separated list of IP addresses and CIDR ranges (`10.0.0.0/8`,
 * `2001:db8::/32`, `192.0.2.7`), trimmed; undefined or blank: none.
 */
export function cidrList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

/** An IPv4 or IPv6 address, optionally with a prefix length that fits it. */
export function isCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128);
}

/** A comma-separated list of addresses and CIDR ranges (see cidrList); the message names the bad entry. */
export function IsCidrList(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isCidrList',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && cidrList(value).every(isCidr),
        defaultMessage: (args) => {
          const bad = typeof args?.value === 'string' ? cidrList(args.value).find((entry) => !isCidr(entry)) : undefined;
          return `${args?.property} must be IP addresses or CIDR ranges, comma separated${bad === undefined ? '' : `; "${bad}" is not one`}`;
        },
      },
    },
    options,
  );
}
