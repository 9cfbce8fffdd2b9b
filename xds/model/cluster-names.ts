/** The reference's cluster names: `outbound|<port>|<subset>|<fqdn>` and `inbound|<port>||`. */
export const PASSTHROUGH_CLUSTER = 'PassthroughCluster';
export const BLACKHOLE_CLUSTER = 'BlackHoleCluster';

export function outboundClusterName(port: number, subset: string, hostname: string): string {
  return `outbound|${port}|${subset}|${hostname}`;
}

export function inboundClusterName(targetPort: number): string {
  return `inbound|${targetPort}||`;
}

export interface ParsedClusterName {
  readonly direction: 'outbound' | 'inbound';
  readonly port: number;
  readonly subset: string;
  readonly hostname: string;
}

/** Undefined for names that are not `<direction>|<port>|<subset>|<host>` with a valid port. */
export function parseClusterName(name: string): ParsedClusterName | undefined {
  const parts = name.split('|');
  if (parts.length !== 4) return undefined;
  const [direction = '', portText = '', subset = '', hostname = ''] = parts;
  if (direction !== 'outbound' && direction !== 'inbound') return undefined;
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port < 1 || port > 65535) return undefined;
  return { direction, port, subset, hostname };
}
