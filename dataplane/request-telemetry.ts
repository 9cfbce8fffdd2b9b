import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { UpstreamDecision } from './decisions/index.js';
import { bodyBytesOf } from './counted-response.js';
import type { MeshMetrics, RequestLabels, TcpLabels } from './mesh-metrics.js';
import {
  encodePeerMetadata,
  newPeerMetadataDecoder,
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
  /** What the access log reads once the request is recorded: the response flags (comma-joined, '' for none) and the request body bytes. */
  summary(): { readonly flags: string; readonly requestBytes: number };
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
  const prefix =
    parts.length === 1 ? `${name}.${namespace}.svc.` : parts.length === 2 ? `${name}.svc.` : parts.length === 3 && parts[2] === 'svc' ? `${name}.` : undefined;
  if (!prefix) return undefined;
  for (const candidate of known) if (candidate.startsWith(prefix)) return candidate;
  return undefined;
}

function serviceLabels(
  service: string | undefined,
  fallbackName = UNKNOWN,
): Pick<RequestLabels, 'destination_service' | 'destination_service_name' | 'destination_service_namespace'> {
  if (!service) return { destination_service: UNKNOWN, destination_service_name: fallbackName, destination_service_namespace: UNKNOWN };
  const [name = UNKNOWN, namespace = UNKNOWN, svc] = service.split('.');
  return { destination_service: service, destination_service_name: name, destination_service_namespace: svc === 'svc' ? namespace : UNKNOWN };
}

type SideLabels<Side extends 'source' | 'destination'> = Pick<
  RequestLabels,
  `${Side}_${'workload' | 'workload_namespace' | 'principal' | 'app' | 'version' | 'cluster'}`
>;

function sourceLabels(workload: WorkloadFacts, principal: string): SideLabels<'source'> {
  return {
    source_workload: workload.name,
    source_workload_namespace: workload.namespace,
    source_principal: principal,
    source_app: workload.app,
    source_version: workload.version,
    source_cluster: workload.cluster,
  };
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

/** Distinct label sets kept built (a full cache starts again). */
const MAX_LABEL_SETS = 1024;

/** What one HTTP request's metrics are made of, filled in as it goes. */
interface ExchangeState {
  readonly started: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly host: string;
  readonly res: ServerResponse;
  readonly arrival: ArrivalFacts;
  exchanged: WorkloadFacts | undefined;
  cluster: string | undefined;
  upstreamMutualTls: boolean;
  upstreamUri: string | undefined;
  grpcStatus: string;
  requestBytes: number;
  readonly flags: string[];
  recorded: boolean;
}

/** One unambiguous key for a list of values (each length-prefixed; `~` for none). */
function keyOf(parts: readonly (string | boolean | undefined)[]): string {
  let key = '';
  for (const part of parts) key += part === undefined ? '~' : `${String(part).length}:${String(part)}`;
  return key;
}

const PASSTHROUGH_CLUSTERS = new Set(['PassthroughCluster', 'BlackHoleCluster', 'InboundPassthroughCluster']);

/** The proxy that reports: its workload and its own SPIFFE identity. */
type Reporter = Pick<RequestTelemetryOptions, 'workload' | 'localUri'>;

/** Everything but the response code and gRPC status; `service` is the inbound request's (its host matched to a known service). */
function baseLabels(
  reporter: Reporter,
  arrival: ArrivalFacts,
  cluster: string | undefined,
  service: string | undefined,
  upstreamMutualTls: boolean,
  exchanged: WorkloadFacts | undefined,
  upstreamUri: string | undefined,
  protocol: string,
  flags: string,
): TcpLabels {
  if (arrival.direction === 'inbound') {
    return {
      reporter: 'destination',
      ...sourceLabels(
        arrival.mutualTls ? trustedPeer(exchanged, arrival.peerUri) : UNKNOWN_WORKLOAD,
        arrival.mutualTls ? principalLabel(arrival.peerUri) : UNKNOWN,
      ),
      ...destinationLabels(reporter.workload, principalLabel(reporter.localUri())),
      ...serviceLabels(service),
      request_protocol: protocol,
      response_flags: flags,
      connection_security_policy: arrival.mutualTls ? 'mutual_tls' : 'none',
    };
  }
  const destination = upstreamMutualTls ? trustedPeer(exchanged, upstreamUri) : UNKNOWN_WORKLOAD;
  const clusterService = cluster !== undefined ? clusterHost(cluster) : undefined;
  return {
    reporter: 'source',
    ...sourceLabels(reporter.workload, upstreamMutualTls ? principalLabel(reporter.localUri()) : UNKNOWN),
    ...destinationLabels(destination, upstreamMutualTls ? principalLabel(upstreamUri) : UNKNOWN),
    ...serviceLabels(clusterService, cluster !== undefined && PASSTHROUGH_CLUSTERS.has(cluster) ? cluster : UNKNOWN),
    request_protocol: protocol,
    response_flags: flags,
    connection_security_policy: upstreamMutualTls ? 'mutual_tls' : 'none',
  };
}

export function newRequestTelemetry(options: RequestTelemetryOptions): RequestTelemetry {
  const { metrics, workload } = options;
  const now = options.now ?? (() => performance.now());
  const ownMetadata: Readonly<Record<string, string>> = { [PEER_METADATA_HEADER]: encodePeerMetadata(workload), [PEER_METADATA_ID_HEADER]: options.nodeId };
  const peerMetadata = newPeerMetadataDecoder();

  // Label sets by what they are made of: a request like an earlier one takes its labels object
  // (whose text the metrics keep) instead of building 21 fields and their text again.
  let labelSets = new Map<string, RequestLabels>();
  const peerIds = new WeakMap<WorkloadFacts, number>();
  const peerId = (peer: WorkloadFacts | undefined): string => {
    if (!peer) return '';
    let id = peerIds.get(peer);
    if (id === undefined) peerIds.set(peer, (id = ++peers));
    return String(id);
  };
  let peers = 0;
  const requestLabels = (exchange: ExchangeState, finished: boolean): RequestLabels => {
    const { arrival, cluster, upstreamMutualTls, exchanged, upstreamUri, headers, res } = exchange;
    const inbound = arrival.direction === 'inbound';
    const service = inbound ? serviceOfHost(exchange.host, workload.namespace, options.knownServices()) : undefined;
    const protocol = (headers['content-type'] ?? '').startsWith('application/grpc') ? 'grpc' : 'http';
    const flags = exchange.flags.length > 0 ? exchange.flags.join(',') : '-';
    const code = String(res.headersSent || finished ? res.statusCode : 0);
    const local = options.localUri();
    const key = keyOf([
      arrival.direction,
      arrival.mutualTls,
      arrival.peerUri,
      service,
      cluster,
      upstreamMutualTls,
      peerId(exchanged),
      upstreamUri,
      protocol,
      flags,
      code,
      exchange.grpcStatus,
      local,
    ]);
    let labels = labelSets.get(key);
    if (!labels) {
      if (labelSets.size >= MAX_LABEL_SETS) labelSets = new Map();
      labels = Object.freeze({
        ...baseLabels(options, arrival, cluster, service, upstreamMutualTls, exchanged, upstreamUri, protocol, flags),
        response_code: code,
        grpc_response_status: exchange.grpcStatus,
      });
      labelSets.set(key, labels);
    }
    return labels;
  };
  const edits = {
    outbound: { requestSet: ownMetadata, requestRemove: PEER_METADATA_HEADERS, responseSet: {}, responseRemove: PEER_METADATA_HEADERS },
    inbound: { requestSet: {}, requestRemove: PEER_METADATA_HEADERS, responseSet: ownMetadata, responseRemove: PEER_METADATA_HEADERS },
    none: { requestSet: {}, requestRemove: PEER_METADATA_HEADERS, responseSet: {}, responseRemove: PEER_METADATA_HEADERS },
  } as const satisfies Record<string, HeaderEdits>;

  return {
    beginHttp(headers, host, res, arrival) {
      const inbound = arrival.direction === 'inbound';
      const fromMeshedClient = inbound && arrival.mutualTls && headers[PEER_METADATA_HEADER] !== undefined;
      const exchange: ExchangeState = {
        started: now(),
        headers,
        host,
        res,
        arrival,
        // Only a verified peer's word about itself counts; plain text callers' headers are dropped unread.
        exchanged: fromMeshedClient ? peerMetadata(headers[PEER_METADATA_HEADER]) : undefined,
        cluster: undefined,
        upstreamMutualTls: false,
        upstreamUri: undefined,
        grpcStatus: '',
        requestBytes: Number(headers['content-length'] ?? 0) || 0,
        flags: [],
        recorded: false,
      };
      const record = (finished: boolean): void => {
        if (exchange.recorded) return;
        exchange.recorded = true;
        if (!finished) exchange.flags.push('DC');
        metrics.recordRequest(requestLabels(exchange, finished), now() - exchange.started, exchange.requestBytes, bodyBytesOf(res));
      };
      res.once('finish', () => record(true));
      res.once('close', () => record(res.writableFinished));
      return {
        upstream(name, mutualTls) {
          exchange.cluster = name;
          exchange.upstreamMutualTls = mutualTls;
        },
        flag: (flag) => void exchange.flags.push(flag),
        headerEdits: () => (!inbound && exchange.upstreamMutualTls ? edits.outbound : fromMeshedClient ? edits.inbound : edits.none),
        response(responseHeaders, uri) {
          const status = responseHeaders['grpc-status'];
          if (typeof status === 'string' && /^\d{1,2}$/.test(status)) exchange.grpcStatus = status;
          if (inbound || !exchange.upstreamMutualTls) return;
          exchange.upstreamUri = uri;
          exchange.exchanged = peerMetadata(responseHeaders[PEER_METADATA_HEADER]);
        },
        requestBytes(bytes) {
          exchange.requestBytes = bytes;
        },
        summary: () => ({ flags: exchange.flags.join(','), requestBytes: exchange.requestBytes }),
      };
    },
    beginTcp(arrival, cluster, upstreamMutualTls) {
      const labels = baseLabels(options, arrival, cluster, undefined, upstreamMutualTls, undefined, undefined, 'tcp', '-');
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
