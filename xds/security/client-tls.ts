import type { ClientTlsSettings, DestinationRule, Subset, TrafficPolicy } from '../../crds/index.js';
import type { ClusterTransportSocket, ClusterTransportSocketHook, ClusterTransportSocketInput } from '../generators/sidecar-clusters.js';
import { jsonToStruct } from '../struct-json.js';
import { ROOT_SECRET, sdsSecretConfig, WORKLOAD_SECRET } from './sds-secret-config.js';

const UPSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const RAW_BUFFER = { name: 'envoy.transport_sockets.raw_buffer', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' } };
const TLS_PARAMS = { tls_minimum_protocol_version: 'TLSv1_2', tls_maximum_protocol_version: 'TLSv1_3' };

/** `outbound_.<port>_.<subset>_.<fqdn>`: the SNI of mesh mutual TLS. */
export function meshSni(port: number, subset: string, hostname: string): string {
  return `outbound_.${port}_.${subset}_.${hostname}`;
}

/** The DestinationRule TLS settings for one port and subset: the subset's own policy first, port-level settings over the policy's. */
export function clientTlsSettingsFor(rule: DestinationRule | undefined, port: number, subset?: Subset): ClientTlsSettings | undefined {
  const forPort = (policy: TrafficPolicy | undefined): ClientTlsSettings | undefined =>
    policy?.portLevelSettings?.find((settings) => settings.port?.number === port)?.tls ?? policy?.tls;
  return forPort(subset?.trafficPolicy) ?? forPort(rule?.spec.trafficPolicy);
}

function meshTls(input: ClusterTransportSocketInput, trustDomain: string): object {
  const accounts = input.push.serviceAccountsByHost.get(input.service.hostname) ?? [];
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': UPSTREAM_TLS_TYPE,
      sni: meshSni(input.servicePort.port, input.subset?.name ?? '', input.service.hostname),
      common_tls_context: {
        tls_params: TLS_PARAMS,
        alpn_protocols: ['h2', 'http/1.1'],
        tls_certificate_sds_secret_configs: [sdsSecretConfig(WORKLOAD_SECRET)],
        combined_validation_context: {
          default_validation_context: {
            match_subject_alt_names: accounts.map((account) => ({ exact: `spiffe://${trustDomain}/ns/${input.service.namespace}/sa/${account}` })),
          },
          validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET),
        },
      },
    },
  };
}

function dataSource(path: string | undefined): object | undefined {
  return path ? { filename: path } : undefined;
}

/** SIMPLE and MUTUAL: the user's TLS, certificates from files or from the secret `credentialName` names over SDS. */
function userTls(settings: ClientTlsSettings, input: ClusterTransportSocketInput): object {
  const mutual = settings.mode === 'MUTUAL';
  const credential = settings.credentialName;
  const validation: Record<string, unknown> = {};
  if (!settings.insecureSkipVerify) {
    const ca = dataSource(settings.caCertificates);
    if (ca) validation['trusted_ca'] = ca;
    if (settings.subjectAltNames && settings.subjectAltNames.length > 0) validation['match_subject_alt_names'] = settings.subjectAltNames.map((san) => ({ exact: san }));
  }
  const common: Record<string, unknown> = { tls_params: TLS_PARAMS };
  if (credential) {
    if (mutual) common['tls_certificate_sds_secret_configs'] = [sdsSecretConfig(credential)];
    if (!settings.insecureSkipVerify) common['combined_validation_context'] = { default_validation_context: validation, validation_context_sds_secret_config: sdsSecretConfig(`${credential}-cacert`) };
  } else {
    if (mutual && settings.clientCertificate && settings.privateKey) {
      common['tls_certificates'] = [{ certificate_chain: dataSource(settings.clientCertificate), private_key: dataSource(settings.privateKey) }];
    }
    if (Object.keys(validation).length > 0) common['validation_context'] = validation;
  }
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: settings.sni ?? input.service.hostname, common_tls_context: common },
  };
}

export interface ClientTlsHookOptions {
  /** The mesh trust domain (workload SANs are `spiffe://<trust domain>/ns/<ns>/sa/<sa>`). */
  readonly trustDomain: (input: ClusterTransportSocketInput) => string;
  /** Mesh config `enableAutoMtls`. */
  readonly autoMtls: (input: ClusterTransportSocketInput) => boolean;
}

/**
 * The client side of mutual TLS for outbound clusters: a DestinationRule's TLS mode when it sets
 * one (DISABLE, SIMPLE, MUTUAL, MESH_MUTUAL; port-level settings and subsets override), else
 * auto mutual TLS — mesh TLS to endpoints labelled `tlsMode: mesh`, plain text to the rest.
 */
export function newClientTlsHook(options: ClientTlsHookOptions): ClusterTransportSocketHook {
  return (input): ClusterTransportSocket | undefined => {
    if (input.direction !== 'outbound') return undefined;
    const settings = clientTlsSettingsFor(input.destinationRule, input.servicePort.port, input.subset);
    switch (settings?.mode) {
      case 'DISABLE':
        return undefined;
      case 'MESH_MUTUAL':
        return { transport_socket: meshTls(input, options.trustDomain(input)) };
      case 'SIMPLE':
      case 'MUTUAL':
        return { transport_socket: userTls(settings, input) };
      default:
        if (!options.autoMtls(input)) return undefined;
        return {
          transport_socket_matches: [
            { name: 'tlsMode-mesh', match: jsonToStruct({ tlsMode: 'mesh' }), transport_socket: meshTls(input, options.trustDomain(input)) },
            { name: 'tlsMode-disabled', match: jsonToStruct({}), transport_socket: RAW_BUFFER },
          ],
        };
    }
  };
}

/** The hook as the daemon configures it: trust domain and auto mTLS from the push's mesh config. */
export function newMeshClientTlsHook(): ClusterTransportSocketHook {
  return newClientTlsHook({ trustDomain: (input) => input.push.meshConfig.trustDomain, autoMtls: (input) => input.push.meshConfig.enableAutoMtls !== false });
}
