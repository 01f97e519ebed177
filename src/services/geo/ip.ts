/**
 * IP addresses as the city index stores them: IPv4 and IPv6 apart, each address as fixed-width lowercase hex (8
 * or 32 digits), so that comparing strings compares addresses. IPv4-mapped IPv6 addresses count as IPv4.
 */
import ipaddr from 'ipaddr.js';
import type { Family } from '../../redis/geo/commands.js';

export type { Family };

export interface Address {
  family: Family;
  hex: string;
}

export interface Range {
  family: Family;
  start: string;
  end: string;
}

const WIDTH: Record<Family, number> = { 4: 8, 6: 32 };
const V4_MAX = 0xffffffffn;

function fromBytes(bytes: number[]): bigint {
  return bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
}

export function toHex(value: bigint, family: Family): string {
  return value.toString(16).padStart(WIDTH[family], '0');
}

function parsed(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  // IPv4's check throws and catches internally on an IPv6 address (17 µs each): ask only what can be IPv4.
  if (!text.includes(':')) return ipaddr.IPv4.isValidFourPartDecimal(text) ? ipaddr.IPv4.parse(text) : null;
  if (!ipaddr.IPv6.isValid(text)) return null;
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address() : v6;
}

/** A dotted IPv4 or an IPv6 address; null for anything else. */
export function parseAddress(text: string): Address | null {
  const ip = parsed(text.trim());
  if (!ip) return null;
  const family: Family = ip.kind() === 'ipv4' ? 4 : 6;
  return { family, hex: toHex(fromBytes(ip.toByteArray()), family) };
}

/** A CIDR block ("1.0.0.0/24", "2001:200::/32") as the range it covers. */
export function parseCidr(text: string): Range | null {
  if (!ipaddr.isValidCIDR(text)) return null;
  const [ip, bits] = ipaddr.parseCIDR(text);
  const family: Family = ip.kind() === 'ipv4' ? 4 : 6;
  const size = family === 4 ? 32 : 128;
  const start = fromBytes(ip.toByteArray());
  const hostBits = BigInt(size - bits);
  const first = (start >> hostBits) << hostBits;
  return { family, start: toHex(first, family), end: toHex(first | ((1n << hostBits) - 1n), family) };
}

/**
 * A range given by its first and last address, each as an address or as a decimal integer (the book's
 * startIpNum and the "-num" files); decimal ranges that end within 32 bits are IPv4.
 */
export function parseBounds(first: string, last: string): Range | null {
  if (/^\d+$/.test(first) && /^\d+$/.test(last)) {
    const [a, b] = [BigInt(first), BigInt(last)];
    if (a > b || b >= 1n << 128n) return null;
    const family: Family = b <= V4_MAX ? 4 : 6;
    return { family, start: toHex(a, family), end: toHex(b, family) };
  }
  const a = parseAddress(first);
  const b = parseAddress(last);
  if (!a || !b || a.family !== b.family || a.hex > b.hex) return null;
  return { family: a.family, start: a.hex, end: b.hex };
}
