import { errorMessage, type Logger } from '../../runtime/index.js';
import { firstStringField, type EncodedAny, type EnvoyProtos } from '../../xds/envoy/index.js';
import type { AgentReport } from './agent-reports.js';

/** A type the agent subscribes to on the proxy's stream, and what it does with each response. */
export interface AgentSubscription {
  readonly typeUrl: string;
  /** Takes a response's resources; returns why they are refused (a NACK), or undefined (an ACK). */
  onResources(resources: readonly EncodedAny[]): string | undefined;
}

/** The agent's side of one relayed stream: its requests, and the responses it answers itself. */
export interface AgentStreamSubscriptions {
  /** The first request of each subscription, to send upstream after the proxy's first request. */
  requests(): Buffer[];
  /**
   * For a response of one of the agent's types: the ACK or NACK to send upstream (the response
   * is not relayed); undefined for any other response.
   */
  answer(response: Buffer): Buffer | undefined;
  /** A report of the agent as a request of the stream's flavour. */
  report(report: AgentReport): Buffer;
}

/** `type_url` is field 4 of both DiscoveryResponse and DeltaDiscoveryResponse. */
const TYPE_URL_FIELD = 4;

/**
 * The reference's agent asks for its own types (NDS) on the proxy's stream, so the daemon sees
 * one connection per proxy: requests are written into the upstream stream, and responses of those
 * types are taken out of it before the proxy sees them. Only the `type_url` of the other responses
 * is read (on the wire, nothing decoded).
 */
export function newAgentSubscriptions(
  protos: EnvoyProtos,
  flavour: 'sotw' | 'delta',
  subscriptions: readonly AgentSubscription[],
  log: Logger,
): AgentStreamSubscriptions {
  const byType = new Map(subscriptions.map((subscription) => [subscription.typeUrl, subscription]));
  const request = protos.lookupType(flavour === 'sotw' ? 'envoy.service.discovery.v3.DiscoveryRequest' : 'envoy.service.discovery.v3.DeltaDiscoveryRequest');
  const response = protos.lookupType(flavour === 'sotw' ? 'envoy.service.discovery.v3.DiscoveryResponse' : 'envoy.service.discovery.v3.DeltaDiscoveryResponse');
  const acked = new Map<string, string>();
  const encode = (message: object): Buffer => Buffer.from(request.encode(request.fromObject(message)).finish());

  return {
    requests: () => subscriptions.map((subscription) => encode({ type_url: subscription.typeUrl })),
    report: (report) => encode({ type_url: report.typeUrl, ...(report.errorDetail ? { error_detail: report.errorDetail } : {}) }),
    answer(bytes) {
      if (byType.size === 0) return undefined;
      const typeUrl = firstStringField(bytes, TYPE_URL_FIELD);
      const subscription = typeUrl !== undefined ? byType.get(typeUrl) : undefined;
      if (!subscription || typeUrl === undefined) return undefined;
      const decoded = response.toObject(response.decode(bytes), { longs: String }) as {
        version_info?: string;
        system_version_info?: string;
        nonce?: string;
        resources?: Array<EncodedAny | { resource?: EncodedAny }>;
      };
      const resources = (decoded.resources ?? []).flatMap((resource) => ('type_url' in resource ? [resource] : resource.resource ? [resource.resource] : []));
      let refusal: string | undefined;
      try {
        refusal = subscription.onResources(resources);
      } catch (error) {
        refusal = errorMessage(error);
      }
      const version = decoded.version_info ?? decoded.system_version_info ?? '';
      if (refusal === undefined) acked.set(typeUrl, version);
      else log.warn({ type: typeUrl, version, error: refusal }, 'refused an update of an agent-handled type');
      const nack = refusal !== undefined ? { error_detail: { code: 3, message: refusal } } : {};
      if (flavour === 'delta') return encode({ type_url: typeUrl, response_nonce: decoded.nonce ?? '', ...nack });
      return encode({ type_url: typeUrl, version_info: acked.get(typeUrl) ?? '', response_nonce: decoded.nonce ?? '', ...nack });
    },
  };
}
