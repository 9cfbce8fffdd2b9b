import type { ConnectionFacts, UpstreamDecision } from './decisions/index.js';
import type { UpstreamTarget } from './upstream-connector.js';

/** How the connection a request came on arrived, as far as its upstream depends on it. */
export interface Arrival {
  readonly direction: 'inbound' | 'outbound' | 'gateway';
  readonly facts: ConnectionFacts;
  /** Where ORIGINAL_DST inbound traffic goes: the app's private address. */
  readonly appAddress?: string;
}

/**
 * Where an upstream decision connects: an endpoint; for ORIGINAL_DST, the app (inbound) or where
 * a proxy-form request asked to go (outbound); or the local reply when there is nowhere to go.
 */
export function upstreamTarget(decision: UpstreamDecision, arrival: Arrival, requestHost?: string): UpstreamTarget | { status: number; body: string } {
  switch (decision.kind) {
    case 'endpoint':
      return { address: decision.address, port: decision.port, tls: decision.tls };
    case 'original-destination': {
      if (arrival.direction === 'inbound')
        return { address: arrival.appAddress ?? arrival.facts.destinationAddress, port: arrival.facts.destinationPort, tls: decision.tls };
      // Outbound passthrough of a proxy-form request: where the client asked to go.
      const host = requestHost ?? arrival.facts.destinationAddress;
      const colon = host.lastIndexOf(':');
      const address = colon > 0 && !host.endsWith(']') ? host.slice(0, colon) : host;
      return { address: address.replace(/^\[|\]$/g, ''), port: decision.portOverride ?? arrival.facts.destinationPort, tls: decision.tls };
    }
    case 'no-healthy-upstream':
      return { status: 503, body: 'no healthy upstream' };
    default:
      return { status: 503, body: `cluster ${decision.cluster} not found` };
  }
}
