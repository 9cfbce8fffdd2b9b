/** Our chains. Every rule we add lives in one of them or jumps to one of them from a built-in chain. */
export const MESH_INBOUND = 'MESH_INBOUND';
export const MESH_REDIRECT = 'MESH_REDIRECT';
export const MESH_IN_REDIRECT = 'MESH_IN_REDIRECT';
export const MESH_OUTPUT = 'MESH_OUTPUT';
export const MESH_DIVERT = 'MESH_DIVERT';
export const MESH_TPROXY = 'MESH_TPROXY';

export const MESH_CHAINS = [MESH_INBOUND, MESH_REDIRECT, MESH_IN_REDIRECT, MESH_OUTPUT, MESH_DIVERT, MESH_TPROXY] as const;

export const BUILT_IN_CHAINS: ReadonlySet<string> = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

export const DEFAULT_PROXY_PORT = 15001;
export const DEFAULT_INBOUND_CAPTURE_PORT = 15006;
export const DEFAULT_INBOUND_TUNNEL_PORT = 15008;
export const DEFAULT_PROBE_PORT = 15002;
export const DEFAULT_PROBE_TIMEOUT_MS = 5000;
/** The agent's DNS listener that captured port-53 traffic is sent to. */
export const AGENT_DNS_PORT = 15053;

/** The proxy's UID (and GID) when `--proxy-uid` is empty. */
export const DEFAULT_PROXY_UID = '1337';
export const DEFAULT_TPROXY_MARK = '1337';
export const DEFAULT_TPROXY_ROUTE_TABLE = '133';
/** TPROXY mode marks proxy → app packets with it so they are not intercepted again as inbound. */
export const OUTBOUND_MARK = '1338';

/** Source address of the inbound passthrough cluster (the proxy connecting to the app). */
export const PASSTHROUGH_SOURCE = { ipv4: '127.0.0.6/32', ipv6: '::6/128' } as const;
export const LOOPBACK_HOST = { ipv4: '127.0.0.1/32', ipv6: '::1/128' } as const;

/** Inbound port never intercepted when every port is (`-b '*'`). */
export const SSH_PORT = '22';
