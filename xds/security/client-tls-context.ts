import type { ClientTlsSettings } from '../../crds/index.js';
import { ROOT_SECRET, sdsSecretConfig, WORKLOAD_SECRET } from './sds-secret-config.js';
import { CREDENTIAL_CA_SUFFIX } from './credential-names.js';

export { CREDENTIAL_CA_SUFFIX };

export const UPSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
export const TLS_TRANSPORT_SOCKET = 'envoy.transport_sockets.tls';
export const RAW_BUFFER_SOCKET = Object.freeze({
  name: 'envoy.transport_sockets.raw_buffer',
  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer' },
});

const TLS_PARAMS = Object.freeze({ tls_minimum_protocol_version: 'TLSv1_2', tls_maximum_protocol_version: 'TLSv1_3' });

export interface MeshTlsSocketInput {
  readonly sni: string;
  /** Exact SANs the server's certificate must carry (its SPIFFE identities); none checks only the chain. */
  readonly subjectAltNames: readonly string[];
  readonly alpn: readonly string[];
}

/** Mesh mutual TLS: the workload certificate (SDS `default`), the mesh root (SDS `ROOTCA`) and exact SAN matches. */
export function buildMeshTlsSocket(input: MeshTlsSocketInput): object {
  return {
    name: TLS_TRANSPORT_SOCKET,
    typed_config: {
      '@type': UPSTREAM_TLS_TYPE,
      sni: input.sni,
      common_tls_context: {
        tls_params: TLS_PARAMS,
        ...alpnOf(input.alpn),
        tls_certificate_sds_secret_configs: [sdsSecretConfig(WORKLOAD_SECRET)],
        combined_validation_context: {
          default_validation_context: sanMatchers(input.subjectAltNames),
          validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET),
        },
      },
    },
  };
}

export interface UserTlsSocketInput {
  /** SIMPLE or MUTUAL settings. */
  readonly settings: ClientTlsSettings;
  /** The SNI when the settings name none. */
  readonly defaultSni: string;
  readonly alpn: readonly string[];
  /** The CA bundle file trusted when the settings name no CA (the operating system's). */
  readonly systemCaCertificates: string;
}

/**
 * SIMPLE and MUTUAL as the user wrote them. With `credentialName` the client key and chain
 * (MUTUAL) come over SDS under that name and the CA under `<credentialName>-cacert`; otherwise
 * from the files named. `insecureSkipVerify` drops the server check; without it a server is
 * checked against the CA given (and `caCrl`), else the system bundle, and the `subjectAltNames` listed.
 */
export function buildUserTlsSocket(input: UserTlsSocketInput): object {
  const { settings } = input;
  const mutual = settings.mode === 'MUTUAL';
  const verify = settings.insecureSkipVerify !== true;
  const sans = sanMatchers(settings.subjectAltNames ?? []);
  const common: Record<string, unknown> = { tls_params: TLS_PARAMS, ...alpnOf(input.alpn) };
  const credential = settings.credentialName;
  if (credential) {
    if (mutual) common['tls_certificate_sds_secret_configs'] = [sdsSecretConfig(credential)];
    if (verify) {
      common['combined_validation_context'] = {
        default_validation_context: sans,
        validation_context_sds_secret_config: sdsSecretConfig(`${credential}${CREDENTIAL_CA_SUFFIX}`),
      };
    }
  } else {
    if (mutual && settings.clientCertificate && settings.privateKey) {
      common['tls_certificates'] = [{ certificate_chain: { filename: settings.clientCertificate }, private_key: { filename: settings.privateKey } }];
    }
    if (verify) {
      common['validation_context'] = {
        trusted_ca: { filename: settings.caCertificates || input.systemCaCertificates },
        ...sans,
        ...(settings.caCrl ? { crl: { filename: settings.caCrl } } : {}),
      };
    }
  }
  return {
    name: TLS_TRANSPORT_SOCKET,
    typed_config: { '@type': UPSTREAM_TLS_TYPE, sni: settings.sni || input.defaultSni, common_tls_context: common },
  };
}

function sanMatchers(subjectAltNames: readonly string[]): { match_subject_alt_names?: { exact: string }[] } {
  return subjectAltNames.length > 0 ? { match_subject_alt_names: subjectAltNames.map((san) => ({ exact: san })) } : {};
}

function alpnOf(alpn: readonly string[]): { alpn_protocols?: string[] } {
  return alpn.length > 0 ? { alpn_protocols: [...alpn] } : {};
}
