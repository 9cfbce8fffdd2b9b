import { fileServingProviders, type CaSecurity, type ServingProviders } from '../ca/index.js';
import { caBundleSourceOf, servingIdentityOf, type WebhookServing } from '../webhook/index.js';

/**
 * What the admission webhooks serve: the certificate the xDS TLS listener serves (CA-issued and
 * renewed, or the `--tlsCertFile` files), once the CA has loaded. Undefined when there is none.
 */
export function webhookServingOf(
  ca: CaSecurity | undefined,
  tlsFiles: { certFile: string; keyFile: string; caCertFile?: string } | undefined,
): ((signal: AbortSignal) => Promise<WebhookServing>) | undefined {
  const servingOf = (providers: ServingProviders): WebhookServing => ({
    identity: servingIdentityOf(providers.identity),
    ...(providers.roots ? { caBundle: caBundleSourceOf(providers.roots) } : {}),
  });
  if (ca) {
    return async (signal) => {
      await ca.ready(signal);
      return servingOf(ca.endpoint().servingProviders());
    };
  }
  if (!tlsFiles) return undefined;
  const fromFiles = servingOf(fileServingProviders(tlsFiles));
  return () => Promise.resolve(fromFiles);
}
