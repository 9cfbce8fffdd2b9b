import type { Authenticator, CaDisabledSecurity, CaSecurity, ServingProviders } from '../ca/index.js';
import type { Logger } from '../runtime/index.js';
import { caBundleSourceOf, servingIdentityOf, type WebhookServing } from '../webhook/index.js';
import type { XdsTlsEndpoint } from '../xds/index.js';

/** What the daemon serves over TLS, and who its callers are: from its CA, or from the certificate files without one. */
export interface SecureServing {
  /** xDS streams and remote debug callers; the CA's array is filled once the CA has loaded. */
  readonly authenticators: readonly Authenticator[];
  /** The secure xDS listener (`--secureGRPCAddr`); undefined when it is not served. */
  readonly xdsTls: XdsTlsEndpoint | undefined;
  /** What the admission webhooks (`--httpsAddr`) serve, once there is a certificate; undefined when they are not served. */
  readonly webhooks: ((signal: AbortSignal) => Promise<WebhookServing>) | undefined;
}

/**
 * The CA's endpoint (its certificate, CA-issued or from the files, and its service on the secure
 * xDS listener), or with the CA disabled the files alone: both listeners serve the same
 * certificate provider, so the files are read and watched once.
 */
export function secureServingOf(security: { ca: CaSecurity } | { caDisabled: CaDisabledSecurity }): SecureServing {
  if ('ca' in security) {
    const { ca } = security;
    return {
      authenticators: ca.authenticators,
      xdsTls: { credentials: () => ca.endpoint().credentials(), register: (server) => ca.endpoint().register(server), ready: ca.ready },
      webhooks: async (signal) => {
        await ca.ready(signal);
        return webhookServingOf(ca.endpoint().servingProviders());
      },
    };
  }
  const { authenticators, serving } = security.caDisabled;
  if (!serving) return { authenticators, xdsTls: undefined, webhooks: undefined };
  const webhooks = webhookServingOf(serving.servingProviders());
  return { authenticators, xdsTls: { credentials: serving.credentials }, webhooks: () => Promise.resolve(webhooks) };
}

/**
 * Said once at start when nothing is served over TLS (the CA disabled, no `--tlsCertFile`): which
 * addresses are not served, why, and the flags that would serve them.
 */
export function reportUnservedTls(log: Logger, serving: SecureServing, addresses: { grpcAddr: string; secureGrpcAddr: string; httpsAddr: string }): void {
  if (serving.xdsTls || serving.webhooks) return;
  log.warn(
    {
      notServed: [`--secureGRPCAddr ${addresses.secureGrpcAddr} (secure xDS)`, `--httpsAddr ${addresses.httpsAddr} (injection and validation webhooks)`],
      servedWith: '--tlsCertFile and --tlsKeyFile (client certificates checked against --caCertFile)',
      plainXds: addresses.grpcAddr,
    },
    'no serving certificate: the CA server is disabled (ENABLE_CA_SERVER=false) and --tlsCertFile/--tlsKeyFile are not given, ' +
      'so the secure xDS address (--secureGRPCAddr) and the webhook HTTPS address (--httpsAddr) are not served; ' +
      'xDS is served in plain text on --grpcAddr only',
  );
}

function webhookServingOf(providers: ServingProviders): WebhookServing {
  return {
    identity: servingIdentityOf(providers.identity),
    ...(providers.roots ? { caBundle: caBundleSourceOf(providers.roots) } : {}),
  };
}
