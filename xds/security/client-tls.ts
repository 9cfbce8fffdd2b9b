import type { ClientTlsSettings } from '../../crds/index.js';
import type { Service, ServicePort } from '../../controllers/index.js';
import { MESH_TLS_MODE } from '../model/endpoint-mesh-tls.js';
import { loadBalancerFor } from '../model/destination-rule-policy.js';
import type { PushContext } from '../model/push-context.js';
import { servicePortProtocol } from '../model/service-port-protocol.js';
import type { ClusterTransportSocket, ClusterTransportSocketHook, ClusterTransportSocketInput } from '../model/cluster-transport-socket.js';
import { jsonToStruct } from '../envoy/struct-json.js';
import { buildMeshTlsSocket, buildUserTlsSocket, RAW_BUFFER_SOCKET } from './client-tls-context.js';
import { clientTlsSettingsFor } from './client-tls-settings.js';

export { clientTlsSettingsFor } from './client-tls-settings.js';

/** The operating system's CA bundle: what SIMPLE and MUTUAL trust when the DestinationRule names no CA. */
export const SYSTEM_CA_CERTIFICATES = '/etc/ssl/certs/ca-certificates.crt';

/** The transport socket match names of auto mutual TLS. */
export const MESH_TLS_MATCH = 'tlsMode-mesh';
export const DISABLED_TLS_MATCH = 'tlsMode-disabled';

/** `outbound_.<port>_.<subset>_.<fqdn>`: the SNI of mesh mutual TLS (an empty subset stays empty). */
export function meshSni(port: number, subset: string, hostname: string): string {
  return `outbound_.${port}_.${subset}_.${hostname}`;
}

/**
 * The identities a client accepts from a service: `spiffe://<td>/ns/<ns>/sa/<sa>` for every
 * service account of the workloads behind it, under the trust domain and each alias, sorted.
 */
export function serviceSubjectAltNames(push: PushContext, service: Pick<Service, 'hostname' | 'namespace' | 'entry'>): string[] {
  const accounts = push.serviceAccountsByHost.get(service.hostname) ?? [];
  const domains = [...new Set([push.meshConfig.trustDomain, ...push.meshConfig.trustDomainAliases])];
  const derived = accounts.flatMap((account) => domains.map((domain) => `spiffe://${domain}/ns/${service.namespace}/sa/${account}`));
  // A ServiceEntry's subjectAltNames are identities as written, beside those of the workloads it selects.
  return [...new Set([...derived, ...(service.entry?.subjectAltNames ?? [])])].sort();
}

/**
 * ALPN offered upstream, matching the codec the cluster speaks: sidecar clusters carry no HTTP/2
 * protocol options, so HTTP (declared or sniffed) goes as HTTP/1.1; opaque TCP offers none (the
 * reference's peer-exchange names have no counterpart here).
 */
export function upstreamAlpn(port: ServicePort): readonly string[] {
  return servicePortProtocol(port) === 'opaque' ? [] : ['http/1.1'];
}

export interface ClientTlsHookOptions {
  /** The CA bundle file SIMPLE and MUTUAL trust when the DestinationRule names none; default the system bundle. */
  readonly systemCaCertificates?: string;
}

/**
 * The client side of TLS for outbound service clusters. A DestinationRule TLS mode (port-level
 * settings and subsets override, see `clientTlsSettingsFor`) is used as written: DISABLE is
 * plain text, SIMPLE and MUTUAL the user's TLS, MESH_MUTUAL the mesh's certificates with the
 * rule's `sni`/`subjectAltNames` if given. Without one, auto mutual TLS (mesh config
 * `enableAutoMtls`) offers mesh TLS to endpoints labelled `tlsMode: mesh` by EDS and plain
 * text to the rest. Trust domain and auto mTLS are read from each push's mesh config.
 */
export function newClientTlsHook(options: ClientTlsHookOptions = {}): ClusterTransportSocketHook {
  const systemCaCertificates = options.systemCaCertificates ?? SYSTEM_CA_CERTIFICATES;
  return (input): ClusterTransportSocket | undefined => {
    if (input.direction !== 'outbound') return undefined;
    const settings = clientTlsSettingsFor(input.destinationRule, input.servicePort.port, input.subset);
    switch (settings?.mode) {
      case 'DISABLE':
        return { transport_socket: RAW_BUFFER_SOCKET };
      case 'SIMPLE':
      case 'MUTUAL':
        return {
          transport_socket: buildUserTlsSocket({ settings, defaultSni: input.service.hostname, alpn: upstreamAlpn(input.servicePort), systemCaCertificates }),
        };
      case 'MESH_MUTUAL':
        return { transport_socket: meshTlsSocket(input, settings) };
      default:
        return autoMtls(input);
    }
  };
}

/** The hook as the daemon configures it. */
export function newMeshClientTlsHook(): ClusterTransportSocketHook {
  return newClientTlsHook();
}

function autoMtls(input: ClusterTransportSocketInput): ClusterTransportSocket | undefined {
  if (input.push.meshConfig.enableAutoMtls === false) return undefined;
  // Outside the mesh (a MESH_EXTERNAL ServiceEntry) TLS comes only from a DestinationRule.
  if (input.service.entry?.meshExternal) return undefined;
  // ORIGINAL_DST (resolution NONE): no endpoint metadata to match, as below.
  if (input.service.entry?.resolution === 'NONE') return undefined;
  // An ORIGINAL_DST cluster's hosts carry no EDS metadata, so the matches could only ever pick
  // plain text; MESH_MUTUAL in the DestinationRule asks for TLS there.
  const lb = loadBalancerFor(input.destinationRule, input.servicePort.port, input.subset);
  if (!lb?.consistentHash && lb?.simple === 'PASSTHROUGH') return undefined;
  return {
    transport_socket_matches: [
      { name: MESH_TLS_MATCH, match: jsonToStruct({ tlsMode: MESH_TLS_MODE }), transport_socket: meshTlsSocket(input) },
      { name: DISABLED_TLS_MATCH, match: jsonToStruct({}), transport_socket: RAW_BUFFER_SOCKET },
    ],
  };
}

function meshTlsSocket(input: ClusterTransportSocketInput, settings?: ClientTlsSettings): object {
  const sans = settings?.subjectAltNames ?? [];
  return buildMeshTlsSocket({
    sni: settings?.sni || meshSni(input.servicePort.port, input.subset?.name ?? '', input.service.hostname),
    subjectAltNames: sans.length > 0 ? sans : serviceSubjectAltNames(input.push, input.service),
    alpn: upstreamAlpn(input.servicePort),
  });
}
