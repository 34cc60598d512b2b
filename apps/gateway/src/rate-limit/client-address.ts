import { createHash } from 'node:crypto';
import ipaddr from 'ipaddr.js';

/**
 * The client a per-address limit counts, as a short Redis key part:
 * - an IPv4 address as it is (`203.0.113.7`); an IPv4-mapped IPv6 address (`::ffff:203.0.113.7`,
 *   what a dual-stack socket reports for an IPv4 peer) is that IPv4 address;
 * - an IPv6 address by its first `ipv6Prefix` bits (`2001:db8:1:2::/64`): a single subscriber
 *   is routinely given a whole /64 (or a /56, /48), so counting whole addresses would give
 *   whoever holds one 2^64 fresh buckets;
 * - anything else (a forwarded header's odd value, `unknown`) hashed, so a key stays short and
 *   holds no client-chosen characters.
 */
export function clientAddressKey(address: string, ipv6Prefix: number): string {
  const ip = parseIp(address);
  if (!ip) return createHash('sha256').update(address).digest('base64url');
  if (ip.kind() === 'ipv4') return ip.toString();
  const bytes = ip.toByteArray();
  for (let bit = ipv6Prefix; bit < 128; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return `${(ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String()}/${ipv6Prefix}`;
}

/** An IPv4 address in dotted-quad form, or an IPv6 address (zone id ignored); IPv4-mapped IPv6 as IPv4. Null for anything else. */
function parseIp(address: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) return ipaddr.IPv4.parse(address);
  if (!ipaddr.IPv6.isValid(address)) return null;
  const ip = ipaddr.IPv6.parse(address);
  if (ip.isIPv4MappedAddress()) return ip.toIPv4Address();
  ip.zoneId = undefined;
  return ip;
}
