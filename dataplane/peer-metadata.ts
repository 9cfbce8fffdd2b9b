/**
 * Who a workload is, for the request metrics: from the proxy's own node metadata, and from the
 * metadata sidecars exchange in a header pair (the client's on requests, the server's on
 * responses). The exchange is believed only over mutual TLS, and only where it agrees with the
 * peer certificate's namespace.
 */

/** Base64 of the JSON of a WorkloadFacts' node-metadata form. */
export const PEER_METADATA_HEADER = 'x-mesh-peer-metadata';
/** The sender's node id. */
export const PEER_METADATA_ID_HEADER = 'x-mesh-peer-metadata-id';
export const PEER_METADATA_HEADERS: readonly string[] = [PEER_METADATA_HEADER, PEER_METADATA_ID_HEADER];

export const UNKNOWN = 'unknown';

export interface WorkloadFacts {
  readonly name: string;
  readonly namespace: string;
  readonly app: string;
  readonly version: string;
  readonly cluster: string;
}

export const UNKNOWN_WORKLOAD: WorkloadFacts = { name: UNKNOWN, namespace: UNKNOWN, app: UNKNOWN, version: UNKNOWN, cluster: UNKNOWN };

/** What a label value may hold (names, namespaces, label values): bounded, no separators. */
const SAFE_VALUE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;
/** The longest peer-metadata header value taken. */
export const MAX_PEER_METADATA_CHARS = 4096;

function safe(value: unknown): string {
  return typeof value === 'string' && SAFE_VALUE.test(value) ? value : UNKNOWN;
}

/**
 * The workload of a proxy from its node metadata: WORKLOAD_NAME (else the pod name), NAMESPACE,
 * LABELS' `app`/`version` (or their `app.kubernetes.io/` forms) and CLUSTER_ID.
 */
export function workloadFromNodeMetadata(metadata: Readonly<Record<string, unknown>>): WorkloadFacts {
  const raw = metadata['LABELS'];
  const labels = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  return {
    name: safe(metadata['WORKLOAD_NAME'] ?? metadata['POD_NAME'] ?? metadata['NAME']),
    namespace: safe(metadata['NAMESPACE']),
    app: safe(labels['app'] ?? labels['app.kubernetes.io/name']),
    version: safe(labels['version'] ?? labels['app.kubernetes.io/version']),
    cluster: safe(metadata['CLUSTER_ID']),
  };
}

/** The header value a sidecar sends about itself. */
export function encodePeerMetadata(workload: WorkloadFacts): string {
  const labels = { ...(workload.app !== UNKNOWN ? { app: workload.app } : {}), ...(workload.version !== UNKNOWN ? { version: workload.version } : {}) };
  const metadata = { WORKLOAD_NAME: workload.name, NAMESPACE: workload.namespace, LABELS: labels, CLUSTER_ID: workload.cluster };
  return Buffer.from(JSON.stringify(metadata)).toString('base64');
}

/** A received header value, or undefined when absent or malformed; every field is checked. */
export function decodePeerMetadata(value: string | readonly string[] | undefined): WorkloadFacts | undefined {
  if (typeof value !== 'string' || value.length > MAX_PEER_METADATA_CHARS) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64').toString('utf8')) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
    const facts = workloadFromNodeMetadata(parsed as Record<string, unknown>);
    return facts.namespace === UNKNOWN ? undefined : facts;
  } catch {
    return undefined;
  }
}

/** Distinct peer-metadata header values kept decoded (a full cache starts again). */
const MAX_DECODED_PEERS = 256;

/** `decodePeerMetadata` through a cache: peers send the same few header values again and again, each is decoded (and checked) once. */
export function newPeerMetadataDecoder(): (value: string | readonly string[] | undefined) => WorkloadFacts | undefined {
  let decoded = new Map<string, WorkloadFacts | undefined>();
  return (value) => {
    // Values longer than any valid one are refused uncached (the cache holds at most 256 × 4 KiB).
    if (typeof value !== 'string' || value.length > MAX_PEER_METADATA_CHARS) return undefined;
    if (decoded.has(value)) return decoded.get(value);
    if (decoded.size >= MAX_DECODED_PEERS) decoded = new Map();
    const facts = decodePeerMetadata(value);
    decoded.set(value, facts);
    return facts;
  };
}

/** The namespace of a SPIFFE identity `spiffe://<td>/ns/<ns>/sa/<sa>`. */
export function spiffeNamespace(uri: string | undefined): string | undefined {
  const match = /^spiffe:\/\/[^/]+\/ns\/([^/]+)\/sa\/[^/]+$/.exec(uri ?? '');
  return match?.[1];
}

/** A SPIFFE URI SAN as the `*_principal` label shows it, or `unknown`. */
export function principalLabel(uri: string | undefined): string {
  return uri !== undefined && spiffeNamespace(uri) !== undefined && uri.length <= 512 ? uri : UNKNOWN;
}

/**
 * A peer's workload as the metrics report it: the exchanged metadata when it came over mutual TLS
 * and names the certificate's namespace; otherwise only the namespace the certificate proves.
 */
export function trustedPeer(exchanged: WorkloadFacts | undefined, peerUri: string | undefined): WorkloadFacts {
  const namespace = spiffeNamespace(peerUri);
  if (namespace === undefined) return UNKNOWN_WORKLOAD;
  if (!exchanged || exchanged.namespace !== namespace) return { ...UNKNOWN_WORKLOAD, namespace };
  return exchanged;
}
