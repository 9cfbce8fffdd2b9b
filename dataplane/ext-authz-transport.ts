import type { ServiceDefinition } from '@grpc/grpc-js';
import type { ExtAuthzFailure, ExtAuthzTransport, UpstreamDecision } from './decisions/index.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import { callHttpAuthorizer } from './ext-authz-http-client.js';
import { newGrpcAuthorizerClients } from './ext-authz-grpc-client.js';
import { AUTHORIZATION_PROTO_FILES, AUTHORIZATION_SERVICE, loadEnvoyProtos, type EnvoyProtos } from '../xds/envoy/index.js';
import type { SecretSet } from './sds-subscriber.js';
import { MissingSecretError } from './tls-material.js';
import type { UpstreamAgents, UpstreamTarget } from './upstream-connector.js';

export interface ExtAuthzTransportOptions {
  /** An endpoint of a cluster, by the proxy's current clusters and endpoints (round robin). */
  upstream(cluster: string): UpstreamDecision;
  secrets(): SecretSet;
  agents: UpstreamAgents;
  stats: DataPlaneStats;
  /** `envoy.service.auth.v3.Authorization`, asked for on the first gRPC check. */
  authorizationService(): ServiceDefinition;
}

export interface DataPlaneExtAuthzTransport extends ExtAuthzTransport {
  /** Closes the gRPC clients. */
  close(): void;
}

/** Where a cluster's check goes, or why it cannot (Envoy's "cluster missing" and "no healthy upstream" are errors). */
function targetOf(decision: UpstreamDecision): UpstreamTarget | ExtAuthzFailure {
  switch (decision.kind) {
    case 'endpoint':
      return { address: decision.address, port: decision.port, tls: decision.tls };
    case 'unknown-cluster':
      return { kind: 'failure', reason: 'unknown-cluster', detail: `cluster ${decision.cluster} not found` };
    case 'no-healthy-upstream':
      return { kind: 'failure', reason: 'no-healthy-upstream', detail: `no healthy upstream in ${decision.cluster}` };
    default:
      return { kind: 'failure', reason: 'no-healthy-upstream', detail: `cluster ${decision.cluster} has no endpoint to call (ORIGINAL_DST)` };
  }
}

/**
 * The data plane's ext_authz calls: the cluster the filter names is resolved through the proxy's
 * own clusters and endpoints (with the cluster's TLS), then spoken to over HTTP/1.1 or gRPC.
 */
export function newExtAuthzTransport(options: ExtAuthzTransportOptions): DataPlaneExtAuthzTransport {
  const grpc = newGrpcAuthorizerClients(options.authorizationService, options.agents.secureContexts);
  return {
    async http(call) {
      const target = targetOf(options.upstream(call.cluster));
      if ('kind' in target) return target;
      try {
        return await callHttpAuthorizer(target, call, options.secrets(), options.agents);
      } catch (error) {
        if (error instanceof MissingSecretError) return { kind: 'failure', reason: 'connect-failure', detail: error.message };
        throw error;
      }
    },
    async grpc(call) {
      const target = targetOf(options.upstream(call.cluster));
      if ('kind' in target) return target;
      if (call.activeGauge) options.stats.adjust(call.activeGauge, 1);
      try {
        return await grpc.check(target, call, options.secrets());
      } catch (error) {
        if (error instanceof MissingSecretError) return { kind: 'failure', reason: 'connect-failure', detail: error.message };
        throw error;
      } finally {
        if (call.activeGauge) options.stats.adjust(call.activeGauge, -1);
      }
    },
    close: () => grpc.close(),
  };
}

/**
 * The Authorization service's definition from the protos the process loaded, or (when those lack
 * it) from the service's own proto files, loaded now.
 */
export function authorizationServiceOf(protos: EnvoyProtos | undefined): ServiceDefinition {
  if (protos) {
    try {
      return protos.serviceDefinition(AUTHORIZATION_SERVICE);
    } catch {
      // Loaded without the auth service (a process that needs few types): load it alone.
    }
  }
  return loadEnvoyProtos({ files: AUTHORIZATION_PROTO_FILES }).serviceDefinition(AUTHORIZATION_SERVICE);
}
