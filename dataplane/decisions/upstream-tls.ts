import { structValue } from './struct-value.js';
import { compileStringMatcher, type StringMatcherConfig } from './string-matcher.js';

/** The endpoint metadata key transport socket matches read. */
export const TRANSPORT_SOCKET_MATCH_FILTER = 'envoy.transport_socket_match';

export interface TransportSocketConfig {
  name: string;
  typed_config?: { '@type'?: string } & Record<string, unknown>;
}

/** The cluster fields that decide how an upstream connection is made. */
export interface ClusterTlsConfig {
  name: string;
  transport_socket?: TransportSocketConfig;
  transport_socket_matches?: { name: string; match?: Record<string, unknown>; transport_socket: TransportSocketConfig }[];
}

export type UpstreamTls =
  | { readonly kind: 'plaintext'; readonly matchName?: string }
  | ({ readonly kind: 'tls'; readonly matchName?: string; readonly sni?: string } & TlsContextSettings);

const UPSTREAM_TLS_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';
const RAW_BUFFER_TYPE = 'type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer';

interface DataSource {
  filename?: string;
  inline_string?: string;
  inline_bytes?: string | Uint8Array;
}

function dataSourceText(source: DataSource | undefined): string | undefined {
  if (!source) return undefined;
  if (source.inline_string !== undefined) return source.inline_string;
  if (source.inline_bytes !== undefined)
    return typeof source.inline_bytes === 'string' ? Buffer.from(source.inline_bytes, 'base64').toString() : Buffer.from(source.inline_bytes).toString();
  if (source.filename !== undefined) return `file:${source.filename}`;
  return undefined;
}

export interface CommonTlsContext {
  alpn_protocols?: string[];
  tls_certificate_sds_secret_configs?: { name: string }[];
  tls_certificates?: { certificate_chain?: DataSource; private_key?: DataSource }[];
  combined_validation_context?: {
    default_validation_context?: { match_subject_alt_names?: { san_type?: string; matcher: StringMatcherConfig }[] | StringMatcherConfig[] };
    validation_context_sds_secret_config?: { name: string };
  };
  validation_context?: {
    trusted_ca?: DataSource;
    match_subject_alt_names?: StringMatcherConfig[];
    match_typed_subject_alt_names?: { san_type?: string; matcher: StringMatcherConfig }[];
  };
  validation_context_sds_secret_config?: { name: string };
}

/** The SAN kinds a certificate carries that SAN matchers read. */
export type SanType = 'DNS' | 'URI';

interface SanMatcherEntry {
  /** Only SANs of this type (`match_typed_subject_alt_names`); any type when absent. */
  readonly type?: string;
  readonly matcher: StringMatcherConfig;
}

function sanMatchersOf(context: CommonTlsContext): SanMatcherEntry[] {
  const combined = context.combined_validation_context?.default_validation_context?.match_subject_alt_names ?? [];
  const plain = context.validation_context?.match_subject_alt_names ?? [];
  const typed = context.validation_context?.match_typed_subject_alt_names ?? [];
  return [...combined, ...plain, ...typed].map((entry) =>
    'matcher' in entry
      ? { ...('san_type' in entry && typeof entry.san_type === 'string' ? { type: entry.san_type } : {}), matcher: entry.matcher }
      : { matcher: entry as StringMatcherConfig },
  );
}

/**
 * A DNS SAN of the certificate against a name the config expects, as Envoy's `dnsNameMatch`: equal
 * ignoring case, or a `*.` wildcard SAN standing for exactly one leftmost label.
 */
export function dnsNameMatches(expected: string, certificateSan: string): boolean {
  const name = expected.toLowerCase();
  const pattern = certificateSan.toLowerCase();
  if (name === pattern) return true;
  if (!pattern.startsWith('*.') || name.length <= pattern.length - 1) return false;
  const label = name.slice(0, name.length - (pattern.length - 1));
  return label !== '' && !label.includes('.') && name.endsWith(pattern.slice(1));
}

function compileSanMatcher(entry: SanMatcherEntry): (san: string, type: SanType) => boolean {
  const matches = compileStringMatcher(entry.matcher);
  const exact = entry.matcher.exact;
  return (san, type) => {
    if (entry.type !== undefined && entry.type !== type) return false;
    // An exact name against a DNS SAN follows DNS wildcard rules; every other matcher reads the SAN as text.
    if (type === 'DNS' && exact !== undefined && entry.matcher.ignore_case !== true) return dnsNameMatches(exact, san);
    return matches(san);
  };
}

/** The certificate and validation settings shared by upstream and downstream TLS contexts. */
export interface TlsContextSettings {
  readonly alpn: readonly string[];
  /** SDS secret names (`default`), or inline/file certificates (a file is given as `file:<path>`). */
  readonly certificateSecrets: readonly string[];
  readonly inlineCertificates: readonly { readonly certificateChain: string; readonly privateKey: string }[];
  /** SDS name of the trust bundle (`ROOTCA`), or an inline/file CA. */
  readonly validationSecret?: string;
  readonly trustedCa?: string;
  /** Whether one SAN of the peer's certificate (URI when no type is given) satisfies the SAN matchers; undefined without matchers. */
  readonly verifySubjectAltName: ((san: string, type?: SanType) => boolean) | undefined;
  readonly sanMatchers: readonly StringMatcherConfig[];
}

export function decodeCommonTlsContext(common: CommonTlsContext): TlsContextSettings {
  const entries = sanMatchersOf(common);
  const sanMatchers = entries.map((entry) => entry.matcher);
  const predicates = entries.map(compileSanMatcher);
  const validationSecret = common.combined_validation_context?.validation_context_sds_secret_config?.name ?? common.validation_context_sds_secret_config?.name;
  const trustedCa = dataSourceText(common.validation_context?.trusted_ca);
  return {
    alpn: common.alpn_protocols ?? [],
    certificateSecrets: (common.tls_certificate_sds_secret_configs ?? []).map((secret) => secret.name),
    inlineCertificates: (common.tls_certificates ?? []).map((certificate) => ({
      certificateChain: dataSourceText(certificate.certificate_chain) ?? '',
      privateKey: dataSourceText(certificate.private_key) ?? '',
    })),
    ...(validationSecret ? { validationSecret } : {}),
    ...(trustedCa ? { trustedCa } : {}),
    verifySubjectAltName: predicates.length === 0 ? undefined : (san, type = 'URI') => predicates.some((matches) => matches(san, type)),
    sanMatchers,
  };
}

function decodeSocket(socket: TransportSocketConfig | undefined, matchName?: string): UpstreamTls {
  const named = matchName === undefined ? {} : { matchName };
  const type = socket?.typed_config?.['@type'];
  if (!socket || type === undefined || type === RAW_BUFFER_TYPE) return { kind: 'plaintext', ...named };
  if (type !== UPSTREAM_TLS_TYPE) throw new Error(`transport socket "${socket.name}" of type ${type} is not supported`);
  const config = socket.typed_config as { sni?: string; common_tls_context?: CommonTlsContext };
  return { kind: 'tls', ...named, ...(config.sni ? { sni: config.sni } : {}), ...decodeCommonTlsContext(config.common_tls_context ?? {}) };
}

/**
 * How the data plane connects to the endpoints of a cluster, compiled once per cluster: the first
 * transport socket match whose every key equals the endpoint's `envoy.transport_socket_match`
 * metadata, else the cluster's own transport socket, else plain text.
 */
export function compileUpstreamTls(cluster: ClusterTlsConfig): (endpointMetadata: Readonly<Record<string, unknown>> | undefined) => UpstreamTls {
  const matches = (cluster.transport_socket_matches ?? []).map((candidate) => ({
    wanted: Object.entries(structValue(candidate.match)),
    tls: decodeSocket(candidate.transport_socket, candidate.name),
  }));
  const fallback = decodeSocket(cluster.transport_socket);
  return (endpointMetadata) => {
    const labels = structValue(endpointMetadata?.[TRANSPORT_SOCKET_MATCH_FILTER]);
    return matches.find((candidate) => candidate.wanted.every(([key, value]) => labels[key] === value))?.tls ?? fallback;
  };
}
