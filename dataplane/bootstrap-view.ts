import { MeshError } from '../runtime/index.js';
/** What the embedded data plane reads from the Envoy bootstrap the agent writes. */
export interface BootstrapView {
  /** The node as a DiscoveryRequest carries it (metadata as plain JSON). */
  readonly node: { id: string; cluster?: string; metadata: Record<string, unknown>; locality?: Record<string, unknown> };
  /** `unix:<path>` or `<host>:<port>` of the `xds-grpc` static cluster. */
  readonly xdsTarget: string;
  /** The `xds-grpc` cluster's TLS: the CA file and name that verify the daemon, the SDS secret of the client certificate. */
  readonly xdsTls?: { readonly caFile: string; readonly serverName: string; readonly certificateSecret: string };
  /** Of the `sds-grpc` static cluster, when there is one. */
  readonly sdsTarget?: string;
  readonly admin?: { address: string; port: number };
  /** The static listener serving `/stats/prometheus` (15090). */
  readonly prometheus?: { address: string; port: number };
  /** ADS flavour from `dynamic_resources.ads_config.api_type`. */
  readonly delta: boolean;
}

export class BootstrapError extends MeshError<'bootstrap-invalid'> {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bootstrap-invalid', message, options);
  }
}

interface Address {
  socket_address?: { address?: string; port_value?: number };
  pipe?: { path?: string };
}

type Json = Record<string, unknown>;

function clusterTarget(clusters: Json[], name: string): string | undefined {
  const cluster = clusters.find((candidate) => candidate['name'] === name);
  if (!cluster) return undefined;
  const endpoints = (cluster['load_assignment'] as { endpoints?: { lb_endpoints?: { endpoint?: { address?: Address } }[] }[] } | undefined)?.endpoints ?? [];
  const address = endpoints[0]?.lb_endpoints?.[0]?.endpoint?.address;
  if (address?.pipe?.path) return `unix:${address.pipe.path}`;
  const socket = address?.socket_address;
  if (socket?.address && socket.port_value !== undefined) return `${socket.address}:${socket.port_value}`;
  throw new BootstrapError(`static_resources.clusters["${name}"]: needs a pipe or socket_address endpoint`);
}

function socketOf(address: Address | undefined): { address: string; port: number } | undefined {
  const socket = address?.socket_address;
  if (!socket || socket.port_value === undefined) return undefined;
  return { address: socket.address ?? '0.0.0.0', port: socket.port_value };
}

interface UpstreamTls {
  sni?: string;
  common_tls_context?: { tls_certificate_sds_secret_configs?: { name?: string }[]; validation_context?: { trusted_ca?: { filename?: string } } };
}

function xdsTlsOf(clusters: Json[], name: string): BootstrapView['xdsTls'] {
  const socket = clusters.find((candidate) => candidate['name'] === name)?.['transport_socket'] as { typed_config?: UpstreamTls } | undefined;
  if (!socket) return undefined;
  const context = socket.typed_config?.common_tls_context;
  const caFile = context?.validation_context?.trusted_ca?.filename;
  const certificateSecret = context?.tls_certificate_sds_secret_configs?.[0]?.name;
  if (!caFile || !certificateSecret) {
    throw new BootstrapError(
      `static_resources.clusters["${name}"].transport_socket: needs validation_context.trusted_ca.filename and a tls_certificate_sds_secret_configs entry`,
    );
  }
  return { caFile, serverName: socket.typed_config?.sni ?? '', certificateSecret };
}

/** Reads the parts of an Envoy bootstrap (JSON) the embedded data plane uses; names what is missing. */
export function readBootstrap(bootstrap: Json): BootstrapView {
  const node = bootstrap['node'] as BootstrapView['node'] | undefined;
  if (!node || typeof node.id !== 'string') throw new BootstrapError('node.id is required');
  const clusters = ((bootstrap['static_resources'] as Json | undefined)?.['clusters'] as Json[] | undefined) ?? [];
  const adsConfig = (
    bootstrap['dynamic_resources'] as { ads_config?: { api_type?: string; grpc_services?: { envoy_grpc?: { cluster_name?: string } }[] } } | undefined
  )?.ads_config;
  const xdsCluster = adsConfig?.grpc_services?.[0]?.envoy_grpc?.cluster_name ?? 'xds-grpc';
  const xdsTarget = clusterTarget(clusters, xdsCluster);
  if (!xdsTarget) throw new BootstrapError(`static_resources.clusters: no "${xdsCluster}" cluster for ADS`);
  const sdsTarget = clusterTarget(clusters, 'sds-grpc');
  const xdsTls = xdsTlsOf(clusters, xdsCluster);
  if (xdsTls && !sdsTarget) throw new BootstrapError('static_resources.clusters: the xDS client certificate needs an "sds-grpc" cluster');
  const listeners = ((bootstrap['static_resources'] as Json | undefined)?.['listeners'] as Json[] | undefined) ?? [];
  const prometheusListener = listeners.find((listener) => JSON.stringify(listener).includes('/stats/prometheus'));
  const admin = socketOf((bootstrap['admin'] as { address?: Address } | undefined)?.address);
  const prometheus = socketOf(prometheusListener?.['address'] as Address | undefined);
  return {
    node: { ...node, metadata: node.metadata ?? {} },
    xdsTarget,
    ...(xdsTls ? { xdsTls } : {}),
    ...(sdsTarget ? { sdsTarget } : {}),
    ...(admin ? { admin } : {}),
    ...(prometheus ? { prometheus } : {}),
    delta: adsConfig?.api_type === 'DELTA_GRPC',
  };
}
