import type { ServiceDefinition } from '@grpc/grpc-js';
import type { Logger } from '../runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import type { ConfigState } from './config-state.js';
import type { ConnectionContext } from './connection-context.js';
import type { DataPlaneStats } from './data-plane-stats.js';
import type { HttpDecision, httpExtAuthzCounters, RequestBodyReader, RequestContext, TcpDecision } from './decisions/index.js';
import { authorizationServiceOf, newExtAuthzTransport } from './ext-authz-transport.js';
import type { SecretSet } from './sds-subscriber.js';
import { leafUriSan } from './tls-material.js';
import { newJwksFetcher } from './jwks-fetch.js';
import type { UpstreamAgents } from './upstream-connector.js';

export interface DecisionInputsOptions {
  state: ConfigState;
  secrets: () => SecretSet;
  agents: UpstreamAgents;
  stats: DataPlaneStats;
  /** The ext_authz gRPC client's service definition comes from these (loaded on first use when absent). */
  protos?: EnvoyProtos;
  log: Logger;
  /** The pod address this proxy runs on. */
  localAddress?: string;
}

/**
 * What the decision functions get besides the request or connection itself: this proxy's
 * identity, the time, the dice and the ext_authz transport; and Envoy's counters of what the
 * ext_authz filters then did.
 */
export interface DecisionInputs {
  /** This proxy's SPIFFE identity: the first URI SAN of its `default` certificate. */
  localUriSan(): string | undefined;
  requestContext(context: ConnectionContext, requestBody?: RequestBodyReader): RequestContext;
  countExtAuthz(decision: HttpDecision | TcpDecision, counters: typeof httpExtAuthzCounters): void;
  /** Closes the ext_authz clients. */
  close(): void;
}

export function newDecisionInputs(options: DecisionInputsOptions): DecisionInputs {
  const { state, stats, log } = options;
  // One round robin for the endpoints of the routes and of the ext_authz clusters.
  let pick = 0;
  let authorization: ServiceDefinition | undefined;
  const extAuthz = newExtAuthzTransport({
    upstream: (cluster) => state.current().decisions.upstream(cluster, pick++),
    secrets: options.secrets,
    agents: options.agents,
    stats,
    authorizationService: () => (authorization ??= authorizationServiceOf(options.protos)),
  });

  const fetchJwks = newJwksFetcher({
    upstream: (cluster) => state.current().decisions.upstream(cluster, pick++),
    secrets: options.secrets,
    agents: options.agents,
  });

  let uriCache: { chain: string; uri: string | undefined } | undefined;
  const localUriSan = (): string | undefined => {
    const certificate = options.secrets().certificates.get('default');
    if (!certificate) return undefined;
    if (uriCache?.chain !== certificate.certificateChain) uriCache = { chain: certificate.certificateChain, uri: leafUriSan(certificate.certificateChain) };
    return uriCache.uri;
  };

  return {
    localUriSan,
    requestContext(context, requestBody) {
      const uri = localUriSan();
      return {
        connection: context.facts,
        ...(uri ? { localUriSan: uri } : {}),
        ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
        now: new Date(),
        random: Math.random(),
        pick: pick++,
        extAuthz,
        fetchJwks,
        ...(requestBody ? { requestBody } : {}),
      };
    },
    countExtAuthz(decision, counters) {
      for (const verdict of decision.extAuthz ?? []) {
        for (const name of counters(verdict)) stats.inc(name);
        if (verdict.detail !== undefined) log.debug({ cluster: verdict.calledCluster, detail: verdict.detail }, 'ext_authz check failed');
      }
    },
    close: () => extAuthz.close(),
  };
}
