import { UsageError } from '../../runtime/index.js';
import { parseCidr, type Cidr } from './cidr.js';

/**
 * Parsers for the string values of the iptables flags. Each throws a UsageError naming the flag,
 * so the CLI exits with code 2 and the user sees which flag to fix.
 */

function invalid(flag: string, value: string, expected: string): UsageError {
  return new UsageError(`invalid ${flag} "${value}": ${expected}`);
}

/** Comma-separated items, trimmed, empty ones dropped (as the reference splits its lists). */
export function splitList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** One listening port, 1 to 65535. */
export function parsePort(flag: string, value: string): number {
  const text = value.trim();
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 1 && port <= 65535)) throw invalid(flag, value, 'expected a port from 1 to 65535');
  return port;
}

/** Ports or port ranges (`8000:8080`) as iptables' `--dport` takes them, in canonical form. */
export function parsePortList(flag: string, value: string): string[] {
  return splitList(value).map((item) => {
    const match = /^(\d{1,5})(?::(\d{1,5}))?$/.exec(item);
    const low = match ? Number(match[1]) : NaN;
    const high = match?.[2] === undefined ? low : Number(match[2]);
    if (!(low >= 0 && high <= 65535 && low <= high)) {
      throw invalid(flag, value, `"${item}" is not a port from 0 to 65535 or a range such as 8000:8080`);
    }
    return low === high ? String(low) : `${low}:${high}`;
  });
}

/** `*` (every port) or a port list; an empty value selects nothing. */
export function parsePortSelection(flag: string, value: string): '*' | string[] {
  return value.trim() === '*' ? '*' : parsePortList(flag, value);
}

export function parseCidrList(flag: string, value: string, wildcardHint = '"*" is not allowed here'): Cidr[] {
  return splitList(value).map((item) => {
    const cidr = parseCidr(item);
    if (!cidr) throw invalid(flag, value, item === '*' ? wildcardHint : `"${item}" is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
    return cidr;
  });
}

/** `*` (every destination) or a CIDR list; an empty value selects nothing. */
export function parseCidrSelection(flag: string, value: string): '*' | Cidr[] {
  return value.trim() === '*' ? '*' : parseCidrList(flag, value, '"*" must stand alone, not in a list');
}

/** Numeric user or group ids, or id ranges (`1000-2000`), as `-m owner` takes them. */
export function parseIdList(flag: string, value: string): string[] {
  return splitList(value).map((item) => {
    const match = /^(\d{1,10})(?:-(\d{1,10}))?$/.exec(item);
    const low = match ? Number(match[1]) : NaN;
    const high = match?.[2] === undefined ? low : Number(match[2]);
    if (!(low >= 0 && high <= 0xffffffff && low <= high)) {
      throw invalid(flag, value, `"${item}" is not a numeric id or an id range such as 1000-2000`);
    }
    return low === high ? String(low) : `${low}-${high}`;
  });
}

/** Network interface names (at most 15 characters; a trailing `+` matches a prefix). */
export function parseInterfaceList(flag: string, value: string): string[] {
  return splitList(value).map((item) => {
    if (!/^[A-Za-z0-9_.:@-]{1,15}\+?$/.test(item)) throw invalid(flag, value, `"${item}" is not an interface name`);
    return item;
  });
}

/** A firewall mark, decimal or `0x` hexadecimal, 1 to 0xffffffff. */
export function parseMark(flag: string, value: string): string {
  const text = value.trim();
  const mark = /^(0x[0-9a-fA-F]{1,8}|\d{1,10})$/.test(text) ? Number(text) : NaN;
  if (!(mark >= 1 && mark <= 0xffffffff)) throw invalid(flag, value, 'expected a mark from 1 to 4294967295 (decimal or 0x hexadecimal)');
  return text;
}

/** A policy-routing table id. */
export function parseRouteTable(flag: string, value: string): string {
  const text = value.trim();
  const table = /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!(table >= 1 && table <= 0xffffffff)) throw invalid(flag, value, 'expected a routing table id from 1 to 4294967295');
  return String(table);
}
