import type { ServerTlsSettings } from '../../../crds/index.js';
import { CREDENTIAL_CA_SUFFIX, credentialResourceName, isAgentSecret } from '../../security/credential-names.js';
import { adsSecretConfig, ROOT_SECRET, sdsSecretConfig, WORKLOAD_SECRET } from '../../security/sds-secret-config.js';

export const DOWNSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const HTTP_ALPN = ['h2', 'http/1.1'] as const;
const TLS_VERSIONS: Readonly<Record<string, string>> = {
  TLS_AUTO: 'TLS_AUTO',
  TLSV1_0: 'TLSv1_0',
  TLSV1_1: 'TLSv1_1',
  TLSV1_2: 'TLSv1_2',
  TLSV1_3: 'TLSv1_3',
};

function tlsParams(tls: ServerTlsSettings): Record<string, unknown> {
  return {
    tls_minimum_protocol_version: TLS_VERSIONS[tls.minProtocolVersion ?? 'TLSV1_2'] ?? 'TLSv1_2',
    tls_maximum_protocol_version: TLS_VERSIONS[tls.maxProtocolVersion ?? 'TLSV1_3'] ?? 'TLSv1_3',
    ...(tls.cipherSuites && tls.cipherSuites.length > 0 ? { cipher_suites: [...tls.cipherSuites] } : {}),
  };
}

/** Client-certificate checks written in the server's settings (SANs, SPKI and certificate hashes). */
function peerChecks(tls: ServerTlsSettings): Record<string, unknown> {
  return {
    ...(tls.subjectAltNames && tls.subjectAltNames.length > 0 ? { match_subject_alt_names: tls.subjectAltNames.map((san) => ({ exact: san })) } : {}),
    ...(tls.verifyCertificateSpki && tls.verifyCertificateSpki.length > 0 ? { verify_certificate_spki: [...tls.verifyCertificateSpki] } : {}),
    ...(tls.verifyCertificateHash && tls.verifyCertificateHash.length > 0 ? { verify_certificate_hash: [...tls.verifyCertificateHash] } : {}),
  };
}

/** A credential's SdsSecretConfig: the agent's SDS for its own names, the daemon over ADS for Secrets (`kubernetes://…`). */
function credentialSecretConfig(credentialName: string): object {
  const name = credentialResourceName(credentialName);
  return isAgentSecret(name) ? sdsSecretConfig(name) : adsSecretConfig(name);
}

/**
 * The DownstreamTlsContext of a terminating gateway server: MESH_MUTUAL serves the workload
 * certificate (`default`) and checks clients against `ROOTCA`; `credentialName(s)` take the
 * certificate from a Secret the daemon serves over ADS (`kubernetes://<name>`, or
 * `kubernetes://<ns>/<name>`) and, for MUTUAL, the CA from `caCertCredentialName` or
 * `kubernetes://<credentialName>-cacert`; otherwise the files named in the server.
 * MUTUAL and MESH_MUTUAL require a client certificate, OPTIONAL_MUTUAL checks one when sent.
 * HTTPS servers offer `h2, http/1.1`; TLS servers in front of a tcp_proxy offer no ALPN.
 */
export function buildServerTlsContext(tls: ServerTlsSettings, options: { readonly http: boolean }): object {
  const mode = tls.mode ?? 'SIMPLE';
  const checksClient = mode === 'MUTUAL' || mode === 'MESH_MUTUAL' || mode === 'OPTIONAL_MUTUAL';
  const common: Record<string, unknown> = { tls_params: tlsParams(tls), ...(options.http ? { alpn_protocols: [...HTTP_ALPN] } : {}) };
  const checks = peerChecks(tls);
  const credentials = tls.credentialNames ?? (tls.credentialName ? [tls.credentialName] : []);
  const [firstCredential] = credentials;
  if (mode === 'MESH_MUTUAL') {
    common['tls_certificate_sds_secret_configs'] = [sdsSecretConfig(WORKLOAD_SECRET)];
    common['combined_validation_context'] = { default_validation_context: checks, validation_context_sds_secret_config: sdsSecretConfig(ROOT_SECRET) };
  } else if (firstCredential !== undefined) {
    common['tls_certificate_sds_secret_configs'] = credentials.map(credentialSecretConfig);
    if (checksClient) {
      const ca = tls.caCertCredentialName ?? `${firstCredential}${CREDENTIAL_CA_SUFFIX}`;
      common['combined_validation_context'] = { default_validation_context: checks, validation_context_sds_secret_config: credentialSecretConfig(ca) };
    }
  } else {
    const certificates =
      tls.tlsCertificates ??
      (tls.serverCertificate && tls.privateKey
        ? [{ serverCertificate: tls.serverCertificate, privateKey: tls.privateKey, caCertificates: tls.caCertificates }]
        : []);
    const files = certificates.filter((certificate) => certificate.serverCertificate && certificate.privateKey);
    if (files.length > 0)
      common['tls_certificates'] = files.map((certificate) => ({
        certificate_chain: { filename: certificate.serverCertificate },
        private_key: { filename: certificate.privateKey },
      }));
    const caFile = tls.caCertificates ?? certificates.find((certificate) => certificate.caCertificates)?.caCertificates;
    if (checksClient && (caFile || Object.keys(checks).length > 0)) {
      common['validation_context'] = {
        ...(caFile ? { trusted_ca: { filename: caFile } } : {}),
        ...(tls.caCrl ? { crl: { filename: tls.caCrl } } : {}),
        ...checks,
      };
    }
  }
  return {
    name: 'envoy.transport_sockets.tls',
    typed_config: {
      '@type': DOWNSTREAM_TLS_TYPE,
      ...(mode === 'MUTUAL' || mode === 'MESH_MUTUAL' ? { require_client_certificate: { value: true } } : {}),
      common_tls_context: common,
    },
  };
}
