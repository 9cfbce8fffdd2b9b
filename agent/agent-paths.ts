import type { LoggingOptions, Settings } from '../controllers/runtime/index.js';
import type { ProxyType } from './proxy/proxy-identity.js';

/** Where a pod mounts what the agent reads and serves (relative to the working folder, as the reference's absolute paths). */
export const AGENT_PATHS = {
  token: './var/run/secrets/tokens/mesh-token',
  meshRoot: './var/run/secrets/mesh/root-cert.pem',
  sdsSocket: './var/run/secrets/workload-spiffe-uds/socket',
  bootstrap: './etc/mesh/proxy/envoy-rev.json',
  /** FILE_MOUNTED_CERTS: `cert-chain.pem`, `key.pem`, `root-cert.pem`. */
  mountedCerts: './etc/certs',
  /** The agent's xDS proxy (PROXY_XDS_VIA_AGENT). */
  xdsSocket: './etc/mesh/proxy/XDS',
  /** The bootstrap of proxyless gRPC applications, and where their certificates go without OUTPUT_CERTS. */
  grpcBootstrap: './etc/mesh/proxy/grpc-bootstrap.json',
  grpcCerts: './etc/mesh/proxy',
} as const;

/** Everything the agent is assembled from, typed: the command line maps its flags here (cli/). */
export interface AgentOptions {
  readonly type: ProxyType;
  readonly settings: Settings<'pilot-agent'>;
  readonly logging: Partial<LoggingOptions>;
  /** `--concurrency`: the data plane's worker threads (0: the proxy config's). */
  readonly concurrency: number;
  /** `--domain`; '' for `<namespace>.svc.cluster.local`. */
  readonly domain: string;
  /** `--meshConfig`: the mesh config file (its `defaultConfig` is the proxy config). */
  readonly meshConfigFile: string;
  readonly proxyLogLevel: string;
  readonly proxyComponentLogLevel: string;
  readonly serviceCluster: string;
  /** `--templateFile`: a bootstrap merged under ours; '' for none. */
  readonly templateFile: string;
}
