import type { PeerCertificate } from './facts.js';

/** `forward_client_cert_details` and `set_current_client_cert_details` of an HCM. */
export interface ClientCertHeaderConfig {
  forward_client_cert_details?: string | number;
  set_current_client_cert_details?: { subject?: boolean | { value: boolean }; cert?: boolean; chain?: boolean; dns?: boolean; uri?: boolean };
}

export interface ClientCertConnection {
  readonly peerCertificate?: PeerCertificate;
  /** The URI SAN of the proxy's own serving certificate (`By`). */
  readonly localUriSan?: string;
}

const MODES = ['SANITIZE', 'FORWARD_ONLY', 'APPEND_FORWARD', 'SANITIZE_SET', 'ALWAYS_FORWARD_ONLY'];
export const XFCC_HEADER = 'x-forwarded-client-cert';

function flag(value: boolean | { value: boolean } | undefined): boolean {
  return typeof value === 'object' ? value.value : value === true;
}

/**
 * The X-Forwarded-Client-Cert value the upstream receives (undefined: the header is removed),
 * as Envoy computes it: SANITIZE drops it; FORWARD_ONLY keeps it for mutual TLS connections;
 * APPEND_FORWARD and SANITIZE_SET add this hop's element (`By`, `Hash`, then the chosen details)
 * for mutual TLS connections and otherwise keep or drop what came in; ALWAYS_FORWARD_ONLY keeps it.
 */
export function compileClientCertHeader(
  config: ClientCertHeaderConfig,
): (incoming: string | undefined, connection: ClientCertConnection) => string | undefined {
  const raw = config.forward_client_cert_details ?? 'SANITIZE';
  const mode = typeof raw === 'number' ? (MODES[raw] ?? 'SANITIZE') : raw;
  const details = config.set_current_client_cert_details ?? {};
  // The peer's chain is not carried into the decisions; its leaf is.
  if (details.chain === true) throw new Error('set_current_client_cert_details.chain is not supported');
  const element = (connection: ClientCertConnection): string => {
    const cert = connection.peerCertificate as PeerCertificate;
    const parts: string[] = [];
    if (connection.localUriSan) parts.push(`By=${connection.localUriSan}`);
    parts.push(`Hash=${cert.sha256}`);
    if (details.cert === true && cert.pem) parts.push(`Cert="${encodeURIComponent(cert.pem)}"`);
    if (flag(details.subject)) parts.push(`Subject="${cert.subject.replace(/"/g, '\\"')}"`);
    if (details.uri === true) for (const uri of cert.uriSans) parts.push(`URI=${uri}`);
    if (details.dns === true) for (const dns of cert.dnsSans) parts.push(`DNS=${dns}`);
    return parts.join(';');
  };
  // A connection's element is the same for each of its requests: built once per certificate.
  const elements = new WeakMap<PeerCertificate, { readonly localUriSan: string | undefined; readonly value: string }>();
  const elementOf = (connection: ClientCertConnection): string => {
    const cert = connection.peerCertificate as PeerCertificate;
    const cached = elements.get(cert);
    if (cached !== undefined && cached.localUriSan === connection.localUriSan) return cached.value;
    const value = element(connection);
    elements.set(cert, { localUriSan: connection.localUriSan, value });
    return value;
  };
  return (incoming, connection) => {
    const mutual = connection.peerCertificate !== undefined;
    switch (mode) {
      case 'FORWARD_ONLY':
        return mutual ? incoming : undefined;
      case 'ALWAYS_FORWARD_ONLY':
        return incoming;
      case 'APPEND_FORWARD':
        if (!mutual) return undefined;
        return incoming ? `${incoming},${elementOf(connection)}` : elementOf(connection);
      case 'SANITIZE_SET':
        return mutual ? elementOf(connection) : undefined;
      default:
        return undefined;
    }
  };
}
