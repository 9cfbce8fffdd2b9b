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
  /** The pod's resolver: the DNS proxy's upstreams and search domains. */
  resolvConf: './etc/resolv.conf',
  /** The pod's labels from the downward API (`key="value"` lines): node metadata LABELS. */
  podLabels: './etc/mesh/pod/labels',
} as const;
