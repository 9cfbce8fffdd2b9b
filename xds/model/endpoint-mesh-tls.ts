import type { Endpoint } from '../../controllers/index.js';
import type { PeerAuthentication } from '../../crds/index.js';
import type { PushContext } from './push-context.js';
import { composePeerAuthentication, mtlsModeForPort, type ComposedPeerAuthentication } from './peer-authentication.js';

/** The metadata key Envoy's `transport_socket_matches` read, and the value meshed endpoints carry. */
export const TRANSPORT_SOCKET_MATCH_KEY = 'envoy.transport_socket_match';
export const MESH_TLS_MODE = 'mesh';

/** Which endpoints of one push take mesh mutual TLS: the `tlsMode: mesh` label auto mTLS reads. */
export interface EndpointMeshTls {
  /**
   * True when the endpoint has a sidecar and its workload's PeerAuthentication (port level
   * included, on the endpoint's container port) does not resolve to DISABLE.
   */
  acceptsMeshTls(endpoint: Endpoint): boolean;
}

// EDS resources are built lazily, cluster by cluster, by several generators (sidecar EDS,
// proxyless gRPC) that share nothing but the push context; keying the memo by that immutable
// context gives every caller of one push the same answers without threading a memo through
// them, and the entry goes with the context.
const byPush = new WeakMap<PushContext, EndpointMeshTls>();

/** The endpoint TLS decisions of a push, computed at most once per workload and push. */
export function endpointMeshTlsOf(push: PushContext): EndpointMeshTls {
  let known = byPush.get(push);
  if (!known) byPush.set(push, (known = newEndpointMeshTls(push)));
  return known;
}

function newEndpointMeshTls(push: PushContext): EndpointMeshTls {
  // Without a DISABLE anywhere no workload resolves to DISABLE: nothing to compose.
  const anyDisable = push.peerAuthentications.all.some(mentionsDisable);
  const composedByWorkload = new Map<string, ComposedPeerAuthentication>();
  const compose = (namespace: string, labels: Readonly<Record<string, string>>): ComposedPeerAuthentication =>
    composePeerAuthentication({
      rootNamespace: push.rootNamespace,
      policies: push.peerAuthentications.candidates(namespace),
      workload: { namespace, labels },
    });

  return {
    acceptsMeshTls(endpoint) {
      if (!endpoint.hasSidecar) return false;
      if (!anyDisable) return true;
      // A sidecar is known from the pod, so the endpoint names its workload; without one only mesh-wide policies could apply.
      const namespace = endpoint.workload?.namespace ?? push.rootNamespace;
      const key = `${namespace}/${endpoint.workload?.name ?? ''}`;
      let composed = composedByWorkload.get(key);
      if (!composed) composedByWorkload.set(key, (composed = compose(namespace, endpoint.workload ? endpoint.labels : {})));
      return mtlsModeForPort(composed, endpoint.port) !== 'DISABLE';
    },
  };
}

function mentionsDisable(policy: PeerAuthentication): boolean {
  return policy.spec.mtls?.mode === 'DISABLE' || Object.values(policy.spec.portLevelMtls ?? {}).some((entry) => entry.mode === 'DISABLE');
}
