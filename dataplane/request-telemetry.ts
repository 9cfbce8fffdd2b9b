import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpDecision, UpstreamDecision } from './decisions/index.js';
import type { MeshMetrics, RequestLabels, TcpLabels } from './mesh-metrics.js';
import {
  decodePeerMetadata,
  MAX_PEER_METADATA_CHARS,
  encodePeerMetadata,
  PEER_METADATA_HEADER,
  PEER_METADATA_HEADERS,
  PEER_METADATA_ID_HEADER,
  principalLabel,
  trustedPeer,
  UNKNOWN,
  UNKNOWN_WORKLOAD,
  type WorkloadFacts,
} from './peer-metadata.js';

/** Which side reports: the server sidecar (inbound) is `destination`, a client sidecar or gateway `source`. */
export type TrafficDirection = 'inbound' | 'outbound' | 'gateway';

export interface RequestTelemetryOptions {
  readonly metrics: MeshMetrics;
  /** This proxy's workload (its node metadata). */
  readonly workload: WorkloadFacts;
  readonly nodeId: string;
  /** This proxy's SPIFFE identity, from its certificate. */
  readonly localUri: () => string | undefined;
  /** Service host names the config knows (its outbound clusters'): inbound `destination_service` is one of them or `unknown`. */
  readonly knownServices: () => ReadonlySet<string>;
  readonly now?: () => number;
}

/** How a request or connection arrived. */
export interface ArrivalFacts {
  readonly direction: TrafficDirection;
  /** Set when the downstream connection is mutual TLS with a verified certificate. */
  readonly peerUri?: string;
  readonly mutualTls: boolean;
}

export interface HeaderEdits {
  readonly requestSet: Readonly<Record<string, string>>;
  readonly requestRemove: readonly string[];
  readonly responseSet: Readonly<Record<string, string>>;
  readonly responseRemove: readonly string[];
}

export interface HttpExchange {
  /** The cluster the route chose; whether the upstream connection is mutual TLS. */
  upstream(cluster: string, mutualTls: boolean): void;
  /** An Envoy response flag (`NR`, `UF`, `URX`…); several are joined with commas. */
  flag(flag: string): void;
  /** The peer-metadata exchange: what goes upstream and back downstream. */
  headerEdits(): HeaderEdits;
  /** The upstream response's headers and the upstream certificate's URI SAN. */
  response(headers: IncomingHttpHeaders, peerUri: string | undefined): void;
  requestBytes(bytes: number): void;
}

export interface TcpExchange {
  received(bytes: number): void;
  sent(bytes: number): void;
  closed(): void;
}

export interface RequestTelemetry {
  /** Starts observing one HTTP request; it is recorded when the response finishes or the downstream goes away. */
  beginHttp(headers: Readonly<Record<string, string>>, host: string, res: ServerResponse, arrival: ArrivalFacts): HttpExchange;
  /** One proxied TCP connection to `cluster`, counted as opened now. */
  beginTcp(arrival: ArrivalFacts, cluster: string, upstreamMutualTls: boolean): TcpExchange;
}

/** An upstream reached with the mesh's mutual TLS: the workload certificate and the mesh's trust bundle. */
export function isMeshMutualTls(upstream: UpstreamDecision): boolean {
  if (upstream.kind !== 'endpoint' && upstream.kind !== 'original-destination') return false;
  return upstream.tls.kind === 'tls' && upstream.tls.certificateSecrets.includes('default') && upstream.tls.validationSecret === 'ROOTCA';
}

type ForwardDecision = Extract<HttpDecision, { kind: 'forward' }>;

/** A forward decision with the peer-metadata exchange's header edits added to the route's. */
export function withHeaderEdits(decision: ForwardDecision, edits: HeaderEdits): ForwardDecision {
  const response = decision.route.responseHeaders;
  return {
    ...decision,
    headersToRemove: [...decision.headersToRemove, ...edits.requestRemove],
    headersToSet: { ...decision.headersToSet, ...edits.requestSet },
    route: { ...decision.route, responseHeaders: { ...response, remove: [...response.remove, ...edits.responseRemove], set: { ...response.set, ...edits.responseSet } } },
  };
}

/** The service hosts of a config's outbound clusters, computed once per cluster map. */
export function newServiceHostIndex(): (clusterNames: ReadonlyMap<string, unknown>) => ReadonlySet<string> {
  let last: { of: ReadonlyMap<string, unknown>; hosts: ReadonlySet<string> } | undefined;
  return (clusters) => {
    if (last?.of !== clusters) last = { of: clusters, hosts: new Set([...clusters.keys()].flatMap((name) => clusterHost(name) ?? [])) };
    return last.hosts;
  };
}

/** `outbound|8000|subset|httpbin.bar.svc.cluster.local` → its host. */
function clusterHost(cluster: string): string | undefined {
  const parts = cluster.split('|');
  return parts.length === 4 && parts[0] === 'outbound' && parts[3] ? parts[3] : undefined;
}

/** The host of a request matched to a known service: full names, or `name`, `name.ns`, `name.ns.svc` short forms. */
export function serviceOfHost(host: string, namespace: string, known: ReadonlySet<string>): string | undefined {
  const name = host.replace(/:\d+$/, '').toLowerCase();
  if (known.has(name)) return name;
  const parts = name.split('.');
  const prefix = parts.length === 1 ? `${name}.${namespace}.svc.` : parts.length === 2 ? `${name}.svc.` : parts.length === 3 && parts[2] === 'svc' ? `${name}.` : undefined;
  if (!prefix) return undefined;
  for (const candidate of known) if (candidate.startsWith(prefix)) return candidate;
  return undefined;
}

function serviceLabels(service: string | undefined, fallbackName = UNKNOWN): Pick<RequestLabels, 'destination_service' | 'destination_service_name' | 'destination_service_namespace'> {
  if (!service) return { destination_service: UNKNOWN, destination_service_name: fallbackName, destination_service_namespace: UNKNOWN };
  const [name = UNKNOWN, namespace = UNKNOWN, svc] = service.split('.');
  return { destination_service: service, destination_service_name: name, destination_service_namespace: svc === 'svc' ? namespace : UNKNOWN };
}

type SideLabels<Side extends 'source' | 'destination'> = Pick<RequestLabels, `${Side}_${'workload' | 'workload_namespace' | 'principal' | 'app' | 'version' | 'cluster'}`>;

function sourceLabels(workload: WorkloadFacts, principal: string): SideLabels<'source'> {
  return { source_workload: workload.name, source_workload_namespace: workload.namespace, source_principal: principal, source_app: workload.app, source_version: workload.version, source_cluster: workload.cluster };
}

function destinationLabels(workload: WorkloadFacts, principal: string): SideLabels<'destination'> {
  return {
    destination_workload: workload.name,
    destination_workload_namespace: workload.namespace,
    destination_principal: principal,
    destination_app: workload.app,
    destination_version: workload.version,
    destination_cluster: workload.cluster,
  };
}

/** Distinct peer-metadata header values kept decoded (a full cache starts again). */
const MAX_DECODED_PEERS = 256;

const PASSTHROUGH_CLUSTERS = new Set(['PassthroughCluster', 'BlackHoleCluster', 'InboundPassthroughCluster']);

/** Counts the bytes written through a response (local replies and proxied bodies alike). */
function countWrites(res: ServerResponse): () => number {
  let bytes = 0;
  const count = (chunk: unknown): void => {
    if (typeof chunk === 'string') bytes += Buffer.byteLength(chunk);
    else if (chunk instanceof Uint8Array) bytes += chunk.length;
  };
  const patched = res as unknown as { write: (...args: unknown[]) => boolean; end: (...args: unknown[]) => unknown };
  const write = patched.write.bind(res);
  const end = patched.end.bind(res);
  patched.write = (...args) => (count(args[0]), write(...args));
  patched.end = (...args) => (typeof args[0] !== 'function' && count(args[0]), end(...args));
  return () => bytes;
}

export function newRequestTelemetry(options: RequestTelemetryOptions): RequestTelemetry {
  const { metrics, workload } = options;
  const now = options.now ?? (() => performance.now());
  const ownMetadata: Readonly<Record<string, string>> = { [PEER_METADATA_HEADER]: encodePeerMetadata(workload), [PEER_METADATA_ID_HEADER]: options.nodeId };
  // Peers send the same few header values again and again: each is decoded (and checked) once.
  let decoded = new Map<string, WorkloadFacts | undefined>();
  const peerMetadata = (value: string | readonly string[] | undefined): WorkloadFacts | undefined => {
    // Values longer than any valid one are refused uncached (the cache holds at most 256 × 4 KiB).
    if (typeof value !== 'string' || value.length > MAX_PEER_METADATA_CHARS) return undefined;
    if (decoded.has(value)) return decoded.get(value);
    if (decoded.size >= MAX_DECODED_PEERS) decoded = new Map();
    const facts = decodePeerMetadata(value);
    decoded.set(value, facts);
    return facts;
  };

  /** Everything but the response code and gRPC status. */
  const baseLabels = (arrival: ArrivalFacts, cluster: string | undefined, host: string | undefined, upstreamMutualTls: boolean, exchanged: WorkloadFacts | undefined, upstreamUri: string | undefined, protocol: string, flags: string): TcpLabels => {
    if (arrival.direction === 'inbound') {
      const service = host !== undefined ? serviceOfHost(host, workload.namespace, options.knownServices()) : undefined;
      return {
        reporter: 'destination',
        ...sourceLabels(arrival.mutualTls ? trustedPeer(exchanged, arrival.peerUri) : UNKNOWN_WORKLOAD, arrival.mutualTls ? principalLabel(arrival.peerUri) : UNKNOWN),
        ...destinationLabels(workload, principalLabel(options.localUri())),
        ...serviceLabels(service),
        request_protocol: protocol,
        response_flags: flags,
        connection_security_policy: arrival.mutualTls ? 'mutual_tls' : 'none',
      };
    }
    const destination = upstreamMutualTls ? trustedPeer(exchanged, upstreamUri) : UNKNOWN_WORKLOAD;
    const service = cluster !== undefined ? clusterHost(cluster) : undefined;
    return {
      reporter: 'source',
      ...sourceLabels(workload, upstreamMutualTls ? principalLabel(options.localUri()) : UNKNOWN),
      ...destinationLabels(destination, upstreamMutualTls ? principalLabel(upstreamUri) : UNKNOWN),
      ...serviceLabels(service, cluster !== undefined && PASSTHROUGH_CLUSTERS.has(cluster) ? cluster : UNKNOWN),
      request_protocol: protocol,
      response_flags: flags,
      connection_security_policy: upstreamMutualTls ? 'mutual_tls' : 'none',
    };
  };

  return {
    beginHttp(headers, host, res, arrival) {
      const started = now();
      const responseBytes = countWrites(res);
      const inbound = arrival.direction === 'inbound';
      const fromMeshedClient = inbound && arrival.mutualTls && headers[PEER_METADATA_HEADER] !== undefined;
      // Only a verified peer's word about itself counts; plain text callers' headers are dropped unread.
      let exchanged = fromMeshedClient ? peerMetadata(headers[PEER_METADATA_HEADER]) : undefined;
      let cluster: string | undefined;
      let upstreamMutualTls = false;
      let upstreamUri: string | undefined;
      let grpcStatus = '';
      let requestBytes = Number(headers['content-length'] ?? 0) || 0;
      const flags: string[] = [];
      let recorded = false;
      const record = (finished: boolean): void => {
        if (recorded) return;
        recorded = true;
        if (!finished) flags.push('DC');
        const protocol = (headers['content-type'] ?? '').startsWith('application/grpc') ? 'grpc' : 'http';
        const labels: RequestLabels = {
          ...baseLabels(arrival, cluster, inbound ? host : undefined, upstreamMutualTls, exchanged, upstreamUri, protocol, flags.length > 0 ? flags.join(',') : '-'),
          response_code: String(res.headersSent || finished ? res.statusCode : 0),
          grpc_response_status: grpcStatus,
        };
        metrics.recordRequest(labels, now() - started, requestBytes, responseBytes());
      };
      res.once('finish', () => record(true));
      res.once('close', () => record(res.writableFinished));
      return {
        upstream(name, mutualTls) {
          cluster = name;
          upstreamMutualTls = mutualTls;
        },
        flag: (flag) => void flags.push(flag),
        headerEdits() {
          const outboundMetadata = !inbound && upstreamMutualTls ? ownMetadata : {};
          return {
            requestSet: outboundMetadata,
            requestRemove: PEER_METADATA_HEADERS,
            responseSet: fromMeshedClient ? ownMetadata : {},
            responseRemove: PEER_METADATA_HEADERS,
          };
        },
        response(responseHeaders, uri) {
          const status = responseHeaders['grpc-status'];
          if (typeof status === 'string' && /^\d{1,2}$/.test(status)) grpcStatus = status;
          if (inbound || !upstreamMutualTls) return;
          upstreamUri = uri;
          exchanged = peerMetadata(responseHeaders[PEER_METADATA_HEADER]);
        },
        requestBytes(bytes) {
          requestBytes = bytes;
        },
      };
    },
    beginTcp(arrival, cluster, upstreamMutualTls) {
      const labels = baseLabels(arrival, cluster, undefined, upstreamMutualTls, undefined, undefined, 'tcp', '-');
      metrics.tcpOpened(labels);
      let open = true;
      return {
        received: (bytes) => metrics.tcpBytes(labels, bytes, 0),
        sent: (bytes) => metrics.tcpBytes(labels, 0, bytes),
        closed() {
          if (!open) return;
          open = false;
          metrics.tcpClosed(labels);
        },
      };
    },
  };
}
