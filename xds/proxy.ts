import { isIP } from 'node:net';
import { MeshError } from '../runtime/index.js';
import { structToJson, type JsonValue, type StructMessage } from './envoy/struct-json.js';

export type ProxyType = 'sidecar' | 'router';

/** What the proxy told us about itself in its node metadata. */
export interface ProxyMetadata {
  readonly namespace?: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly serviceAccount?: string;
  readonly clusterId?: string;
  readonly instanceIps: readonly string[];
  readonly meshVersion?: string;
  /** `grpc` for proxyless gRPC clients and servers. */
  readonly generator?: string;
  readonly podName?: string;
  readonly workloadName?: string;
  readonly interceptionMode?: string;
  /** Every metadata field, as JSON. */
  readonly raw: Readonly<Record<string, JsonValue>>;
}

export interface ProxyLocality {
  readonly region: string;
  readonly zone: string;
  readonly subZone: string;
}

/** A connected proxy, as parsed from the first request's node. */
export interface Proxy {
  /** The whole node id: `sidecar~10.1.2.3~pod.ns~ns.svc.cluster.local`. */
  readonly nodeId: string;
  readonly type: ProxyType;
  /** `<pod>.<namespace>`: the id `/debug/config_dump?proxyID=` takes. */
  readonly id: string;
  readonly ipAddresses: readonly string[];
  readonly dnsDomain: string;
  /** The namespace whose config applies: metadata NAMESPACE, else the first label of the DNS domain. */
  readonly configNamespace: string;
  readonly metadata: ProxyMetadata;
  readonly locality?: ProxyLocality;
  /** The namespace of the stream's authenticated identity, when the stream was authenticated. */
  readonly verifiedNamespace?: string;
  /** The stream's authenticated workload identity (namespace and service account), when it was authenticated. */
  readonly verifiedIdentity?: { readonly namespace: string; readonly serviceAccount: string };
}

/** The node of a discovery request, as received. */
export interface NodeMessage {
  id?: string | null;
  cluster?: string | null;
  metadata?: StructMessage | null;
  locality?: { region?: string | null; zone?: string | null; sub_zone?: string | null } | null;
}

export type ProxyParseErrorCode = 'invalid-node';

const PROXY_TYPES: ReadonlySet<string> = new Set<ProxyType>(['sidecar', 'router']);

/**
 * Builds the proxy model from a node: id `<type>~<ip>~<pod>.<ns>~<ns>.svc.<domain>`, metadata
 * NAMESPACE, LABELS, SERVICE_ACCOUNT, CLUSTER_ID, INSTANCE_IPS, MESH_VERSION, GENERATOR and the
 * rest. Throws a MeshError with code `invalid-node` and a message saying what is wrong.
 */
export function parseProxy(node: NodeMessage | null | undefined): Proxy {
  const nodeId = node?.id ?? '';
  if (nodeId === '') throw invalid('the first request carries no node id');
  const parts = nodeId.split('~');
  if (parts.length !== 4) {
    throw invalid(`node id ${JSON.stringify(nodeId)} must have 4 parts separated by "~" (type~ip~pod.namespace~domain)`);
  }
  const [type = '', ip = '', id = '', dnsDomain = ''] = parts;
  if (!PROXY_TYPES.has(type)) throw invalid(`node id ${JSON.stringify(nodeId)}: unknown proxy type ${JSON.stringify(type)} (expected sidecar or router)`);
  if (id === '') throw invalid(`node id ${JSON.stringify(nodeId)}: empty proxy name`);
  const metadata = parseMetadata(structToJson(node?.metadata));
  let ipAddresses: string[];
  if (metadata.instanceIps.length > 0) {
    const bad = metadata.instanceIps.find((address) => isIP(address) === 0);
    if (bad !== undefined) throw invalid(`node ${JSON.stringify(nodeId)}: invalid address ${JSON.stringify(bad)} in INSTANCE_IPS`);
    ipAddresses = [...metadata.instanceIps];
  } else if (isIP(ip) !== 0) {
    ipAddresses = [ip];
  } else {
    throw invalid(`node id ${JSON.stringify(nodeId)}: invalid IP address ${JSON.stringify(ip)}`);
  }
  const domainParts = dnsDomain.split('.');
  const configNamespace = metadata.namespace || (domainParts.length > 1 ? (domainParts[0] ?? '') : '');
  const locality = node?.locality ? { region: node.locality.region ?? '', zone: node.locality.zone ?? '', subZone: node.locality.sub_zone ?? '' } : undefined;
  return {
    nodeId,
    type: type as ProxyType,
    id,
    ipAddresses,
    dnsDomain,
    configNamespace,
    metadata,
    ...(locality ? { locality } : {}),
  };
}

function parseMetadata(raw: Record<string, JsonValue>): ProxyMetadata {
  const text = (key: string): string | undefined => {
    const value = raw[key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const labels: Record<string, string> = {};
  const rawLabels = raw['LABELS'];
  if (rawLabels && typeof rawLabels === 'object' && !Array.isArray(rawLabels)) {
    for (const [key, value] of Object.entries(rawLabels)) {
      if (typeof value === 'string') labels[key] = value;
    }
  }
  const instanceIps = (text('INSTANCE_IPS') ?? '')
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address !== '');
  return {
    ...optional('namespace', text('NAMESPACE')),
    labels,
    ...optional('serviceAccount', text('SERVICE_ACCOUNT')),
    ...optional('clusterId', text('CLUSTER_ID')),
    instanceIps,
    ...optional('meshVersion', text('MESH_VERSION')),
    ...optional('generator', text('GENERATOR')),
    ...optional('podName', text('NAME')),
    ...optional('workloadName', text('WORKLOAD_NAME')),
    ...optional('interceptionMode', text('INTERCEPTION_MODE')),
    raw,
  };
}

function optional<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: string };
}

function invalid(message: string): MeshError<ProxyParseErrorCode> {
  return new MeshError('invalid-node', message);
}
