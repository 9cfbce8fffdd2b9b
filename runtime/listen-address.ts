import { UsageError } from './errors.js';

export interface ListenAddress {
  host: string;
  port: number;
}

/** What an empty host means in a Go-style address (`:15014`): every IPv4 interface. */
export const ALL_INTERFACES = '0.0.0.0';

/**
 * Parses a Go-style listen address: `:15014` (all interfaces), `host:port`, `[::1]:15014`.
 * Port 0 asks the system for a free port. A malformed address is a UsageError (exit code 2).
 */
export function parseListenAddress(address: string): ListenAddress {
  const separator = address.lastIndexOf(':');
  if (separator < 0) {
    throw new UsageError(`invalid listen address "${address}": missing port (want host:port or :port)`);
  }
  let host = address.slice(0, separator);
  const portText = address.slice(separator + 1);
  if (host.startsWith('[') && host.endsWith(']')) {
    host = host.slice(1, -1);
  } else if (host.includes(':')) {
    throw new UsageError(`invalid listen address "${address}": an IPv6 host must be in brackets, as [::1]:15014`);
  }
  return { host: host === '' ? ALL_INTERFACES : host, port: parsePort(portText, address) };
}

/** A port number from a flag: an integer in 0…65535. */
export function parsePort(text: string, context = text): number {
  if (!/^\d{1,5}$/.test(text)) {
    throw new UsageError(`invalid port in "${context}": want a number from 0 to 65535`);
  }
  const port = Number(text);
  if (port > 65535) {
    throw new UsageError(`invalid port in "${context}": want a number from 0 to 65535`);
  }
  return port;
}
