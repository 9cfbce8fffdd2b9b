import type { VirtualServiceSpec } from '../../crds/index.js';
import { labelsMatch } from '../../names/index.js';
import type { Analyzer } from '../analyzer.js';
import { gatewayKey, MESH_GATEWAY } from './hosts.js';
import { labelsOf } from './kube-objects.js';

const CLAIM_HEADER = '@request.auth.claims';

/** Whether a header name routes on a JWT claim: `@request.auth.claims.<a>[.<b>…]` or `@request.auth.claims[<a>][<b>…]`. */
function isClaimHeader(name: string): boolean {
  if (!name.toLowerCase().startsWith(CLAIM_HEADER)) return false;
  const rest = name.slice(CLAIM_HEADER.length);
  return (rest.startsWith('.') && rest.length > 1) || (rest.startsWith('[') && rest.endsWith(']') && rest.length > 2);
}

/** The first header (or withoutHeaders) key of an HTTP match that routes on a JWT claim. */
function claimKey(spec: VirtualServiceSpec): string | undefined {
  for (const route of spec.http ?? []) {
    for (const match of route.match ?? []) {
      const key = [...Object.keys(match.headers ?? {}), ...Object.keys(match.withoutHeaders ?? {})].find(isClaimHeader);
      if (key !== undefined) return key;
    }
  }
  return undefined;
}

/**
 * MSH0149: a VirtualService routing on JWT claims bound to a Gateway with a pod that no
 * RequestAuthentication (of the root namespace or the pod's, by its selector) applies to: no
 * token is validated there, so the claims are never available to route on.
 */
export const jwtClaimRouteAnalyzer: Analyzer = {
  name: 'virtualservice.JWTClaimRouteAnalyzer',
  description: 'Checks the VirtualService using JWT claim based routing has corresponding RequestAuthentication',
  inputs: ['VirtualService', 'RequestAuthentication', 'Gateway', 'Pod'],
  analyze(context) {
    const gateways = new Map(context.read('Gateway').map((gateway) => [`${gateway.namespace}/${gateway.name}`, gateway]));
    const authentications = context.read('RequestAuthentication');
    const pods = context.read('Pod');
    for (const resource of context.read('VirtualService')) {
      const key = claimKey(resource.object.spec);
      if (key === undefined) continue;
      for (const name of resource.object.spec.gateways ?? []) {
        const gatewayName = gatewayKey(name, resource.namespace);
        const gateway = gateways.get(gatewayName);
        // A Gateway that does not exist is virtualservice.GatewayAnalyzer's finding.
        if (name === MESH_GATEWAY || gateway === undefined) continue;
        for (const pod of pods.filter((p) => labelsMatch(gateway.object.spec.selector, labelsOf(p.object)))) {
          const authenticated = authentications.some(
            (ra) =>
              (ra.namespace === context.rootNamespace || ra.namespace === pod.namespace) &&
              labelsMatch(ra.object.spec.selector?.matchLabels, labelsOf(pod.object)),
          );
          if (authenticated) continue;
          const message = `The virtual service uses the JWT claim based routing (key: ${key}) but found no request authentication for the gateway (${gatewayName}) pod (${pod.name}). The request authentication must first be applied for the gateway pods to validate the JWT token and make the claims available for routing.`;
          context.report('JwtClaimBasedRoutingWithoutRequestAuthN', resource, message);
        }
      }
    }
  },
};
