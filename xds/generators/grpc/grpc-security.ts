import { DRY_RUN_ANNOTATION, LABELS } from '../../../names/index.js';
import { serviceSubjectAltNames } from '../../security/client-tls.js';
import { clientTlsSettingsFor } from '../../security/client-tls-settings.js';
import { TLS_TRANSPORT_SOCKET, UPSTREAM_TLS_TYPE } from '../../security/client-tls-context.js';
import type { EffectiveMtlsMode } from '../../model/peer-authentication.js';
import { buildRbac, RBAC_HTTP_TYPE_URL } from '../../security/rbac-builder.js';
import { buildCustomAuthz } from '../../security/ext-authz-builder.js';
import type { TypedFilter } from '../../model/security-filters.js';
import type { PushContext } from '../../model/push-context.js';
import { MESH_TLS_MODE } from '../../model/endpoint-mesh-tls.js';
import type { ClusterTransportSocketHook } from '../../model/cluster-transport-socket.js';

const DOWNSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
/** The certificate-provider instance the agent-written gRPC bootstrap declares (`file_watcher` over its certificates). */
const PROVIDER_INSTANCE = 'default';
/** gRPC looks its HTTP filters up by type, so the names only need to be distinct within one chain. */
const RBAC_DENY_FILTER = 'envoy.filters.http.rbac.DENY';
const RBAC_ALLOW_FILTER = 'envoy.filters.http.rbac';
const CUSTOM_DENY_FILTER = 'envoy.filters.http.rbac.CUSTOM';

/**
 * The TLS context gRPC accepts: certificates from the bootstrap's provider instance (the workload
 * certificate and the mesh root), SANs checked exactly when given. gRPC refuses SDS, `tls_params`
 * and the older combined-context provider field, so none of them appear.
 */
function commonTlsContext(subjectAltNames: readonly string[]): object {
  return {
    tls_certificate_provider_instance: { instance_name: PROVIDER_INSTANCE, certificate_name: 'default' },
    combined_validation_context: {
      default_validation_context: {
        ca_certificate_provider_instance: { instance_name: PROVIDER_INSTANCE, certificate_name: 'ROOTCA' },
        ...(subjectAltNames.length > 0 ? { match_subject_alt_names: subjectAltNames.map((san) => ({ exact: san })) } : {}),
      },
    },
  };
}

/** The server side of mesh mutual TLS: the client must present a certificate the mesh root signed. */
export function grpcServerTlsSocket(): object {
  return {
    name: TLS_TRANSPORT_SOCKET,
    typed_config: { '@type': DOWNSTREAM_TLS_TYPE, require_client_certificate: { value: true }, common_tls_context: commonTlsContext([]) },
  };
}

/**
 * The mode a proxyless server listener enforces. gRPC cannot tell TLS from plain text on one
 * port, so PERMISSIVE has to pick one: a workload labelled for mesh TLS gets STRICT (its
 * clients were told to use TLS), any other gets plain text, as the reference does.
 */
export function grpcServerMtlsMode(mode: EffectiveMtlsMode, labels: Readonly<Record<string, string>>): 'STRICT' | 'DISABLE' {
  if (mode === 'STRICT') return 'STRICT';
  return mode === 'PERMISSIVE' && labels[LABELS.tlsMode] === MESH_TLS_MODE ? 'STRICT' : 'DISABLE';
}

/**
 * The client side: only an explicit MESH_MUTUAL in the DestinationRule (port level and subsets
 * as for sidecars) turns TLS on. A gRPC client may not use the xDS credentials at all, and a
 * server may not be an xDS server, so auto mutual TLS cannot be assumed; SIMPLE and MUTUAL
 * name files gRPC's providers cannot take. The SANs are the rule's, else the service's accounts.
 */
export const grpcClusterTransportSocket: ClusterTransportSocketHook = (input) => {
  if (input.direction !== 'outbound') return undefined;
  const settings = clientTlsSettingsFor(input.destinationRule, input.servicePort.port, input.subset);
  if (settings?.mode !== 'MESH_MUTUAL') return undefined;
  const sans = settings.subjectAltNames?.length ? settings.subjectAltNames : serviceSubjectAltNames(input.push, input.service);
  return { transport_socket: { name: TLS_TRANSPORT_SOCKET, typed_config: { '@type': UPSTREAM_TLS_TYPE, common_tls_context: commonTlsContext(sans) } } };
};

/** gRPC's xDS server has no ext_authz filter: a CUSTOM rule can only fail closed. */
const NO_EXT_AUTHZ = { ok: false, problem: 'a proxyless gRPC server cannot call an external authorizer' } as const;

/**
 * The authorization filters of a proxyless server, before the router: the CUSTOM rules denied
 * (gRPC cannot ask an external authorizer; what the rules do not match passes), then DENY, then
 * ALLOW. gRPC enforces only ALLOW and DENY and has no shadow mode, so AUDIT and dry-run policies
 * are left out rather than refused.
 */
export function grpcAuthorizationFilters(push: PushContext, namespace: string, labels: Readonly<Record<string, string>>): TypedFilter[] {
  const policies = push.authorizationPolicies
    .forWorkload(namespace, labels)
    .filter((policy) => policy.metadata.annotations?.[DRY_RUN_ANNOTATION]?.toLowerCase() !== 'true');
  const filters: TypedFilter[] = [];
  const trust = { trustDomain: push.meshConfig.trustDomain, trustDomainAliases: push.meshConfig.trustDomainAliases, forTcp: false };
  buildCustomAuthz(policies, { ...trust, resolve: () => NO_EXT_AUTHZ }).filters.forEach((filter, index) => {
    filters.push({ name: `${CUSTOM_DENY_FILTER}.${index}`, typed_config: { '@type': RBAC_HTTP_TYPE_URL, rules: filter.typed_config['rules'] } });
  });
  const enforced = policies.filter((policy) => (policy.spec.action ?? 'ALLOW') === 'DENY' || (policy.spec.action ?? 'ALLOW') === 'ALLOW');
  const built = buildRbac(enforced, trust);
  for (const filter of built.filters) {
    const rules = filter.typed_config.rules;
    if (!rules) continue;
    filters.push({ name: rules.action === 'DENY' ? RBAC_DENY_FILTER : RBAC_ALLOW_FILTER, typed_config: { '@type': RBAC_HTTP_TYPE_URL, rules } });
  }
  return filters;
}
