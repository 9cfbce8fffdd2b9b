import { MeshError } from '../../runtime/index.js';

/** What a readiness probe asks of the app, with the reference's defaults filled in. */
export type ProbeAction =
  | {
      readonly kind: 'http';
      readonly scheme: 'http' | 'https';
      readonly host: string;
      readonly port: number;
      readonly path: string;
      readonly headers: readonly { readonly name: string; readonly value: string }[];
    }
  | { readonly kind: 'tcp'; readonly host: string; readonly port: number }
  | { readonly kind: 'exec'; readonly command: readonly [string, ...string[]] };

/** A proxy config's `readinessProbe` (a WorkloadGroup's `probe`), times in milliseconds. */
export interface ReadinessProbe {
  readonly action: ProbeAction;
  readonly initialDelayMs: number;
  readonly timeoutMs: number;
  readonly periodMs: number;
  /** Consecutive successes that make an unhealthy (or not yet known) workload healthy. */
  readonly successThreshold: number;
  /** Consecutive failures that make a healthy (or not yet known) workload unhealthy. */
  readonly failureThreshold: number;
}

export class ReadinessProbeError extends MeshError<'readiness-probe-invalid'> {
  constructor(message: string) {
    super('readiness-probe-invalid', `readinessProbe: ${message}`);
  }
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A non-negative count of seconds; 0 and absent mean the default, as the reference's `orDefault`. */
function seconds(probe: Json, field: string, fallback: number): number {
  const value = probe[field];
  if (value === undefined || value === null || value === 0) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new ReadinessProbeError(`${field} must be a non-negative number`);
  return value;
}

function port(config: Json, where: string): number {
  const value = config['port'];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 65535) throw new ReadinessProbeError(`${where}.port must be a port number`);
  return value;
}

function text(config: Json, field: string, fallback: string): string {
  const value = config[field];
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function actionOf(probe: Json): ProbeAction {
  const { httpGet, tcpSocket, exec } = probe;
  const given = [httpGet, tcpSocket, exec].filter((value) => value !== undefined && value !== null);
  if (given.length !== 1) throw new ReadinessProbeError('needs exactly one of httpGet, tcpSocket and exec');
  if (isObject(httpGet)) {
    const scheme = text(httpGet, 'scheme', 'HTTP').toLowerCase();
    if (scheme !== 'http' && scheme !== 'https') throw new ReadinessProbeError('httpGet.scheme must be HTTP or HTTPS');
    const headers = Array.isArray(httpGet['httpHeaders']) ? httpGet['httpHeaders'] : [];
    return {
      kind: 'http',
      scheme,
      // The reference probes localhost, as its rewritten app probes do, rather than the pod IP.
      host: text(httpGet, 'host', 'localhost'),
      port: port(httpGet, 'httpGet'),
      path: text(httpGet, 'path', '/'),
      headers: headers.filter(isObject).map((header) => ({ name: String(header['name'] ?? ''), value: String(header['value'] ?? '') })),
    };
  }
  if (isObject(tcpSocket)) return { kind: 'tcp', host: text(tcpSocket, 'host', 'localhost'), port: port(tcpSocket, 'tcpSocket') };
  if (isObject(exec)) {
    const command = exec['command'];
    if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string')) {
      throw new ReadinessProbeError('exec.command must be a non-empty list of strings');
    }
    return { kind: 'exec', command: command as [string, ...string[]] };
  }
  throw new ReadinessProbeError('httpGet, tcpSocket and exec must be objects');
}

/**
 * Parses a proxy config's `readinessProbe` as Kubernetes defines a probe's fields, with the
 * reference agent's defaults: thresholds 1, timeout 1s, period 10s, no initial delay; an HTTP GET
 * of `/` over HTTP on localhost. Undefined when there is none.
 */
export function parseReadinessProbe(value: unknown): ReadinessProbe | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObject(value)) throw new ReadinessProbeError('must be an object');
  return {
    action: actionOf(value),
    initialDelayMs: seconds(value, 'initialDelaySeconds', 0) * 1000,
    timeoutMs: seconds(value, 'timeoutSeconds', 1) * 1000,
    periodMs: seconds(value, 'periodSeconds', 10) * 1000,
    successThreshold: Math.max(1, Math.floor(seconds(value, 'successThreshold', 1))),
    failureThreshold: Math.max(1, Math.floor(seconds(value, 'failureThreshold', 1))),
  };
}
