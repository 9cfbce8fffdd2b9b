import type { Logger } from '../runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import type { ConfigState } from './config-state.js';
import { newConnectionAcceptor } from './connection-acceptor.js';
import { newAccessLogWriter } from './access-log-writer.js';
import { newConnectionContexts } from './connection-context.js';
import { newDataPlaneStats, type DataPlaneStats } from './data-plane-stats.js';
import { newDecisionInputs } from './decision-inputs.js';
import { newDownstreamHttp } from './downstream-http.js';
import { newDownstreamTlsTerminator } from './downstream-tls.js';
import { newHttpRequestHandler } from './http-request-handler.js';
import { newListenerBinding } from './listener-binding.js';
import { newListenerSet } from './listener-set.js';
import { newMeshMetrics } from './mesh-metrics.js';
import { newOpenSockets } from './open-sockets.js';
import { UNKNOWN_WORKLOAD, type WorkloadFacts } from './peer-metadata.js';
import { newRequestTelemetry, newServiceHostIndex } from './request-telemetry.js';
import type { SecretSet } from './sds-subscriber.js';
import { newTcpProxy } from './tcp-proxy.js';
import { newUpstreamAgents } from './upstream-connector.js';
import type { TrafficRecordLimits, TrafficRecordView } from './traffic-record.js';
import { newTrafficRecorder } from './traffic-recorder.js';

export { MAX_HEADER_BYTES } from './downstream-http.js';

export interface EmbeddedDataPlaneOptions {
  state: ConfigState;
  secrets: () => SecretSet;
  /** The workload's pod address: inbound capture and gateway listeners bind here. */
  podAddress: string;
  /** Container ports whose inbound traffic is captured on the pod address (sidecars). */
  inboundPorts?: readonly number[];
  /**
   * Also capture every port the `virtualInbound` chains match on, as they come and go (what
   * iptables capturing all inbound ports gives in a cluster).
   */
  captureInboundFromConfig?: boolean;
  /** The outbound capture port on the pod address, taking HTTP proxy-form requests (sidecars; 15001). */
  outboundPort?: number;
  /** Where ORIGINAL_DST inbound traffic goes: the app's private address (what iptables bypass gives in a cluster). */
  appAddress?: string;
  /** Gateways: bind every listener with `bind_to_port` on the pod address. */
  bindListeners?: boolean;
  log: Logger;
  /** How long the listener filters wait for the first bytes before deciding on what they have. */
  sniffTimeoutMs?: number;
  connectTimeoutMs?: number;
  /** This proxy's workload and node id, for the request metrics and the peer-metadata exchange. */
  workload?: WorkloadFacts;
  nodeId?: string;
  /** What the traffic record keeps (`/recent_requests`); off without. */
  trafficRecord?: TrafficRecordLimits;
  /** The Envoy protos the process loaded: the ext_authz gRPC client's service definition (loaded on first use when absent). */
  protos?: EnvoyProtos;
}

export interface EmbeddedDataPlane {
  start(): Promise<void>;
  /** The recent requests and their verdicts, when the traffic record is on. */
  recentRequests(): TrafficRecordView | undefined;
  /** Bound addresses by listener key (`inbound:<port>`, `outbound`, or a listener name). */
  addresses(): ReadonlyMap<string, { address: string; port: number }>;
  readonly stats: DataPlaneStats;
  /**
   * Stops accepting (on inbound ports only with `inboundOnly`, as Envoy's
   * `/drain_listeners?inboundonly`), closes idle connections, and waits up to `graceMs` for the
   * open ones to finish.
   */
  drain(graceMs: number, options?: { inboundOnly?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The embedded data plane: real listeners on the pod address that take the daemon's listeners,
 * routes, clusters and endpoints and the agent's secrets, and serve traffic through the decision
 * functions, as Envoy would. Composed of the listeners (listener-set.ts, listener-binding.ts), the
 * connections' path (connection-acceptor.ts, downstream-tls.ts, then downstream-http.ts with
 * http-request-handler.ts, or tcp-proxy.ts), what they share (connection-context.ts,
 * decision-inputs.ts, open-sockets.ts) and the stats and request metrics.
 */
export function newEmbeddedDataPlane(options: EmbeddedDataPlaneOptions): EmbeddedDataPlane {
  const { state, secrets, log } = options;
  const stats = newDataPlaneStats();
  const agents = newUpstreamAgents();
  const sockets = newOpenSockets();
  const contexts = newConnectionContexts();
  const inputs = newDecisionInputs({ state, secrets, agents, stats, protos: options.protos, log, localAddress: options.podAddress });

  const serviceHosts = newServiceHostIndex();
  const metrics = newMeshMetrics();
  stats.attach(metrics);
  const telemetry = newRequestTelemetry({
    metrics,
    workload: options.workload ?? UNKNOWN_WORKLOAD,
    nodeId: options.nodeId ?? '',
    localUri: inputs.localUriSan,
    knownServices: () => serviceHosts(state.current().resources.clusters),
  });

  const accessLogs = newAccessLogWriter(log);
  const recorder = options.trafficRecord ? newTrafficRecorder(state, options.trafficRecord) : undefined;
  const http = newDownstreamHttp({
    contexts,
    handle: newHttpRequestHandler({
      state,
      contexts,
      inputs,
      telemetry,
      stats,
      agents,
      secrets,
      appAddress: options.appAddress,
      accessLogs,
      ...(recorder ? { recorder } : {}),
      log,
    }),
    log,
  });
  const accept = newConnectionAcceptor({
    state,
    stats,
    sockets,
    contexts,
    http,
    terminateTls: newDownstreamTlsTerminator({ secrets, stats, log }),
    proxyTcp: newTcpProxy({
      inputs,
      telemetry,
      stats,
      agents,
      secrets,
      sockets,
      connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
      appAddress: options.appAddress,
      accessLogs,
      log,
    }),
    sniffTimeoutMs: options.sniffTimeoutMs ?? 5000,
  });
  const listeners = newListenerSet({ podAddress: options.podAddress });
  const binding = newListenerBinding({
    state,
    listeners,
    accept,
    inboundPorts: options.inboundPorts,
    outboundPort: options.outboundPort,
    bindListeners: options.bindListeners,
    captureInboundFromConfig: options.captureInboundFromConfig,
    log,
  });

  return {
    stats,
    start: () => binding.start(),
    recentRequests: () => recorder?.view(),
    addresses: () => listeners.addresses(),
    async drain(graceMs, drainOptions = {}) {
      binding.stopAccepting(drainOptions.inboundOnly);
      http.closeIdleConnections();
      await sockets.closed(graceMs);
    },
    async stop() {
      binding.stopAccepting();
      sockets.destroyAll();
      http.closeAllConnections();
      agents.destroy();
      inputs.close();
      await accessLogs.close();
    },
  };
}
