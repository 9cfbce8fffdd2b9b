import { ConfigRejection } from './config-rejection.js';
import { structValue } from './struct-value.js';

/** What one request (or TCP connection) leaves for its access-log line: Envoy's stream info, as far as the data plane keeps it. */
export interface AccessLogEntry {
  readonly startTime: Date;
  /** Lower-case names; pseudo-headers `:method`, `:path`, `:authority`, `:scheme` included. Absent for TCP. */
  readonly requestHeaders?: Readonly<Record<string, string>>;
  readonly responseHeaders?: Readonly<Record<string, string | readonly string[] | number | undefined>>;
  /** `HTTP/1.1`, `HTTP/2`; absent for TCP. */
  readonly protocol?: string;
  /** 0 when none was sent (TCP, a reset). */
  readonly responseCode: number;
  /** Comma-joined short flags (`UF,URX`), '' for none. */
  readonly responseFlags: string;
  readonly responseCodeDetails?: string;
  readonly connectionTerminationDetails?: string;
  readonly upstreamTransportFailureReason?: string;
  readonly bytesReceived: number;
  readonly bytesSent: number;
  readonly durationMs: number;
  /** `address:port`. */
  readonly upstreamHost?: string;
  readonly upstreamCluster?: string;
  readonly upstreamLocalAddress?: string;
  readonly downstreamLocalAddress: string;
  readonly downstreamRemoteAddress: string;
  readonly requestedServerName?: string;
  readonly routeName?: string;
  readonly downstreamPeerUriSan?: string;
  readonly downstreamLocalUriSan?: string;
  readonly upstreamPeerUriSan?: string;
}

type Value = string | number | undefined;
type Operator = (entry: AccessLogEntry) => Value;

const withoutPort = (address: string | undefined): string | undefined => address?.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
const headerOf = (headers: AccessLogEntry['responseHeaders'], name: string): string | undefined => {
  const value = headers?.[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(',') : String(value as string | number);
};

/** The operators without an argument; numbers print as numbers in JSON. */
const SIMPLE: Readonly<Record<string, Operator>> = {
  START_TIME: (e) => e.startTime.toISOString(),
  PROTOCOL: (e) => e.protocol,
  RESPONSE_CODE: (e) => e.responseCode,
  RESPONSE_FLAGS: (e) => (e.responseFlags === '' ? undefined : e.responseFlags),
  RESPONSE_CODE_DETAILS: (e) => e.responseCodeDetails,
  CONNECTION_TERMINATION_DETAILS: (e) => e.connectionTerminationDetails,
  UPSTREAM_TRANSPORT_FAILURE_REASON: (e) => e.upstreamTransportFailureReason,
  BYTES_RECEIVED: (e) => e.bytesReceived,
  BYTES_SENT: (e) => e.bytesSent,
  DURATION: (e) => Math.floor(e.durationMs),
  UPSTREAM_HOST: (e) => e.upstreamHost,
  UPSTREAM_CLUSTER: (e) => e.upstreamCluster,
  UPSTREAM_CLUSTER_RAW: (e) => e.upstreamCluster,
  UPSTREAM_LOCAL_ADDRESS: (e) => e.upstreamLocalAddress,
  DOWNSTREAM_LOCAL_ADDRESS: (e) => e.downstreamLocalAddress,
  DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamLocalAddress),
  DOWNSTREAM_REMOTE_ADDRESS: (e) => e.downstreamRemoteAddress,
  DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamRemoteAddress),
  DOWNSTREAM_DIRECT_REMOTE_ADDRESS: (e) => e.downstreamRemoteAddress,
  DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT: (e) => withoutPort(e.downstreamRemoteAddress),
  REQUESTED_SERVER_NAME: (e) => e.requestedServerName,
  ROUTE_NAME: (e) => e.routeName,
  DOWNSTREAM_PEER_URI_SAN: (e) => e.downstreamPeerUriSan,
  DOWNSTREAM_LOCAL_URI_SAN: (e) => e.downstreamLocalUriSan,
  UPSTREAM_PEER_URI_SAN: (e) => e.upstreamPeerUriSan,
};

/** `%NAME%`, `%NAME(arg)%`, `%NAME(arg):max%`. */
const COMMAND = /%([A-Z][A-Z0-9_]*)(?:\(([^)]*)\))?(?::(\d+))?%/g;

function compileCommand(name: string, argument: string | undefined, maxLength: number | undefined, where: string): Operator {
  let operator: Operator | undefined;
  if (name === 'REQ' || name === 'RESP') {
    const [main = '', fallback] = (argument ?? '').toLowerCase().split('?');
    if (main === '') throw new ConfigRejection(where, 'log_format', `%${name}(…)% needs a header name`);
    operator =
      name === 'REQ'
        ? (e) => e.requestHeaders?.[main] ?? (fallback !== undefined ? e.requestHeaders?.[fallback] : undefined)
        : (e) => headerOf(e.responseHeaders, main) ?? (fallback !== undefined ? headerOf(e.responseHeaders, fallback) : undefined);
  } else if (argument === undefined) operator = SIMPLE[name];
  if (!operator)
    throw new ConfigRejection(where, 'log_format', `the access-log operator %${name}${argument !== undefined ? `(${argument})` : ''}% is not supported`);
  if (maxLength === undefined) return operator;
  const inner = operator;
  return (e) => {
    const value = inner(e);
    return typeof value === 'string' ? value.slice(0, maxLength) : value;
  };
}

/** A format string compiled: literal text and operators, each value `-` when it is not known. */
function compileText(format: string, where: string): { render: (entry: AccessLogEntry) => string; single: Operator | undefined } {
  const parts: (string | Operator)[] = [];
  let at = 0;
  for (const match of format.matchAll(COMMAND)) {
    if (match.index > at) parts.push(format.slice(at, match.index));
    parts.push(compileCommand(match[1] ?? '', match[2], match[3] !== undefined ? Number(match[3]) : undefined, where));
    at = match.index + match[0].length;
  }
  if (at < format.length) parts.push(format.slice(at));
  const render = (entry: AccessLogEntry): string => {
    let line = '';
    for (const part of parts) {
      if (typeof part === 'string') line += part;
      else {
        const value = part(entry);
        line += value === undefined || value === '' ? '-' : String(value);
      }
    }
    return line;
  };
  const only = parts.length === 1 ? parts[0] : undefined;
  return { render, single: typeof only === 'function' ? only : undefined };
}

/** Envoy's `SubstitutionFormatString` as this data plane writes it: `text_format_source.inline_string`, `text_format`, or `json_format`. */
export interface LogFormatConfig {
  readonly text_format_source?: { readonly inline_string?: string };
  readonly text_format?: string;
  readonly json_format?: unknown;
  readonly json_format_options?: { readonly sort_properties?: boolean };
}

/**
 * Compiles an access-log format into the line it writes. JSON: an object of the given keys, a value
 * that is one operator keeps its type (numbers stay numbers, unknown is null), as Envoy writes it;
 * nested objects are formatted the same way.
 */
export function compileLogFormat(config: LogFormatConfig, where: string): (entry: AccessLogEntry) => string {
  if (config.json_format !== undefined) {
    const compileObject = (object: Record<string, unknown>): ((entry: AccessLogEntry) => Record<string, unknown>) => {
      const fields = Object.entries(object).map(([key, value]) => {
        if (typeof value === 'string') {
          const text = compileText(value, where);
          const single = text.single;
          return [key, single ? (e: AccessLogEntry) => (single(e) === '' ? null : (single(e) ?? null)) : text.render] as const;
        }
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) return [key, compileObject(value as Record<string, unknown>)] as const;
        return [key, () => value] as const;
      });
      return (entry) => Object.fromEntries(fields.map(([key, render]) => [key, render(entry)]));
    };
    const json = compileObject(structValue(config.json_format));
    const sorted = config.json_format_options?.sort_properties === true;
    return (entry) => {
      const object = json(entry);
      return `${JSON.stringify(sorted ? Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : object)}\n`;
    };
  }
  const format = config.text_format_source?.inline_string ?? config.text_format;
  if (format === undefined) throw new ConfigRejection(where, 'log_format', 'needs text_format_source.inline_string or json_format');
  return compileText(format, where).render;
}
