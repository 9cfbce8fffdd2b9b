import { UsageError } from '../../runtime/index.js';
import { addressFamily, type Cidr } from './cidr.js';
import {
  DEFAULT_INBOUND_CAPTURE_PORT,
  DEFAULT_INBOUND_TUNNEL_PORT,
  DEFAULT_PROXY_PORT,
  DEFAULT_PROXY_UID,
  DEFAULT_TPROXY_MARK,
  DEFAULT_TPROXY_ROUTE_TABLE,
} from './constants.js';
import {
  parseCidrList,
  parseCidrSelection,
  parseIdList,
  parseInterfaceList,
  parseMark,
  parsePort,
  parsePortList,
  parsePortSelection,
  parseRouteTable,
} from './flag-values.js';

export type InterceptionMode = 'REDIRECT' | 'TPROXY';

/** What traffic the sidecar captures: the input of the pure rule builder. */
export interface CaptureConfig {
  readonly proxyPort: number;
  readonly inboundCapturePort: number;
  readonly inboundTunnelPort: number;
  /** Owners whose traffic is never redirected (the proxy itself). */
  readonly proxyUids: readonly string[];
  readonly proxyGids: readonly string[];
  readonly interceptionMode: InterceptionMode;
  readonly tproxyMark: string;
  readonly tproxyRouteTable: string;
  /** `*` captures every inbound port except `inboundPortsExclude`; an empty list captures none. */
  readonly inboundPorts: '*' | readonly string[];
  readonly inboundPortsExclude: readonly string[];
  readonly outboundPorts: readonly string[];
  readonly outboundPortsExclude: readonly string[];
  /** `*` captures every outbound destination except `outboundCidrsExclude`; an empty list captures none. */
  readonly outboundCidrs: '*' | readonly Cidr[];
  readonly outboundCidrsExclude: readonly Cidr[];
  /** Interfaces whose inbound traffic is treated as outbound (virtual machines on the pod network). */
  readonly virtInterfaces: readonly string[];
  readonly redirectDns: boolean;
  readonly captureAllDns: boolean;
  /** Name servers whose port-53 traffic goes to the agent when not capturing all DNS. */
  readonly dnsServersV4: readonly string[];
  readonly dnsServersV6: readonly string[];
}

export const DEFAULT_CAPTURE_CONFIG: CaptureConfig = Object.freeze({
  proxyPort: DEFAULT_PROXY_PORT,
  inboundCapturePort: DEFAULT_INBOUND_CAPTURE_PORT,
  inboundTunnelPort: DEFAULT_INBOUND_TUNNEL_PORT,
  proxyUids: [DEFAULT_PROXY_UID],
  proxyGids: [DEFAULT_PROXY_UID],
  interceptionMode: 'REDIRECT',
  tproxyMark: DEFAULT_TPROXY_MARK,
  tproxyRouteTable: DEFAULT_TPROXY_ROUTE_TABLE,
  inboundPorts: [],
  inboundPortsExclude: [],
  outboundPorts: [],
  outboundPortsExclude: [],
  outboundCidrs: [],
  outboundCidrsExclude: [],
  virtInterfaces: [],
  redirectDns: false,
  captureAllDns: false,
  dnsServersV4: [],
  dnsServersV6: [],
});

/** The `mesh-iptables` flag values as commander names them; absent ones take the seed defaults. */
export interface CaptureFlagValues {
  proxyPort?: string;
  inboundCapturePort?: string;
  inboundTunnelPort?: string;
  proxyUid?: string;
  proxyGid?: string;
  meshInboundInterceptionMode?: string;
  meshInboundTproxyMark?: string;
  meshInboundTproxyRouteTable?: string;
  meshInboundPorts?: string;
  meshLocalExcludePorts?: string;
  meshOutboundPorts?: string;
  meshLocalOutboundPortsExclude?: string;
  meshServiceCidr?: string;
  meshServiceExcludeCidr?: string;
  orchVirtInterfaces?: string;
  redirectDns?: boolean;
  captureAllDns?: boolean;
}

/**
 * Turns flag values into a CaptureConfig, applying the reference defaults: an empty UID means
 * 1337, an empty GID means the UID, an empty TPROXY mark and route table mean 1337 and 133.
 * `nameServers` (from resolv.conf) matter only with `--redirect-dns` and without `--capture-all-dns`.
 */
export function captureConfigFromFlags(flags: CaptureFlagValues, nameServers: readonly string[] = []): CaptureConfig {
  const d = DEFAULT_CAPTURE_CONFIG;
  const uids = parseIdList('--proxy-uid', flags.proxyUid ?? '');
  const gids = parseIdList('--proxy-gid', flags.proxyGid ?? '');
  const proxyUids = uids.length > 0 ? uids : d.proxyUids;
  const exclude = parseCidrList(
    '--mesh-service-exclude-cidr',
    flags.meshServiceExcludeCidr ?? '',
    '"*" would exclude every destination; leave --mesh-service-cidr empty to capture no outbound traffic',
  );
  const servers = { ipv4: [] as string[], ipv6: [] as string[] };
  for (const server of nameServers) {
    const family = addressFamily(server);
    if (family) servers[family].push(server);
  }
  return {
    proxyPort: portOr('--proxy-port', flags.proxyPort, d.proxyPort),
    inboundCapturePort: portOr('--inbound-capture-port', flags.inboundCapturePort, d.inboundCapturePort),
    inboundTunnelPort: portOr('--inbound-tunnel-port', flags.inboundTunnelPort, d.inboundTunnelPort),
    proxyUids,
    proxyGids: gids.length > 0 ? gids : proxyUids,
    interceptionMode: parseInterceptionMode(flags.meshInboundInterceptionMode ?? ''),
    tproxyMark: blank(flags.meshInboundTproxyMark) ? d.tproxyMark : parseMark('--mesh-inbound-tproxy-mark', flags.meshInboundTproxyMark as string),
    tproxyRouteTable: blank(flags.meshInboundTproxyRouteTable)
      ? d.tproxyRouteTable
      : parseRouteTable('--mesh-inbound-tproxy-route-table', flags.meshInboundTproxyRouteTable as string),
    inboundPorts: parsePortSelection('--mesh-inbound-ports', flags.meshInboundPorts ?? ''),
    inboundPortsExclude: parsePortList('--mesh-local-exclude-ports', flags.meshLocalExcludePorts ?? ''),
    outboundPorts: parsePortList('--mesh-outbound-ports', flags.meshOutboundPorts ?? ''),
    outboundPortsExclude: parsePortList('--mesh-local-outbound-ports-exclude', flags.meshLocalOutboundPortsExclude ?? ''),
    outboundCidrs: parseCidrSelection('--mesh-service-cidr', flags.meshServiceCidr ?? ''),
    outboundCidrsExclude: exclude,
    virtInterfaces: parseInterfaceList('--orch-virt-interfaces', flags.orchVirtInterfaces ?? ''),
    redirectDns: flags.redirectDns ?? false,
    captureAllDns: flags.captureAllDns ?? false,
    dnsServersV4: servers.ipv4,
    dnsServersV6: servers.ipv6,
  };
}

function blank(value: string | undefined): boolean {
  return value === undefined || value.trim() === '';
}

function portOr(flag: string, value: string | undefined, fallback: number): number {
  return blank(value) ? fallback : parsePort(flag, value as string);
}

function parseInterceptionMode(value: string): InterceptionMode {
  const text = value.trim();
  if (text === '' || text === 'REDIRECT') return 'REDIRECT';
  if (text === 'TPROXY') return 'TPROXY';
  throw new UsageError(`invalid --mesh-inbound-interception-mode "${value}": expected REDIRECT or TPROXY`);
}

/** IPv6 rules are built (and ip6tables-restore run) only when an IPv6 range is captured or excluded. */
export function capturesIpv6(config: CaptureConfig): boolean {
  const ranges = [...(config.outboundCidrs === '*' ? [] : config.outboundCidrs), ...config.outboundCidrsExclude];
  return ranges.some((cidr) => cidr.family === 'ipv6');
}
