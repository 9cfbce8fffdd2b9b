import type { ServerCredentials } from '@grpc/grpc-js';
import type { KubeConfig } from '@kubernetes/client-node';
import { runnableOf, type Logging, type Manager, type Settings } from '../runtime/index.js';
import type { Authenticator } from './authn/authenticator.js';
import { newCaAuthenticators } from './authn/ca-authenticators.js';
import { caAuthenticationFromSettings } from './ca-settings.js';
import { fileServingProviders, servingCredentials, type ServingProviders, type TlsFiles } from './server/ca-server.js';
import { newFileRoots } from './trust/file-roots.js';

export interface CaDisabledSetupOptions {
  /** Read through `ca-settings.ts` only. */
  readonly settings: Settings<'pilot-discovery'>;
  /** Kubernetes mode: service account tokens are reviewed. */
  readonly kubeConfig?: KubeConfig;
  /** From the mesh config: the trust domain `--caCertFile` vouches for. */
  readonly trustDomain: string;
  /** `--tls-cipher-suites`. */
  readonly cipherSuites: readonly string[];
  /** `--tlsCertFile`/`--tlsKeyFile` (and `--caCertFile`); without them nothing is served over TLS. */
  readonly tlsFiles?: TlsFiles;
  /** Scope `ca`. */
  readonly logging: Logging;
}

/** What the daemon's TLS listeners serve from the files: the xDS listener's credentials, and the webhooks' certificate. */
export interface FileServing {
  credentials(): ServerCredentials;
  servingProviders(): ServingProviders;
}

/** The daemon's security without a CA of its own (ENABLE_CA_SERVER=false). */
export interface CaDisabledSecurity {
  /** Who xDS and debug callers are, tried in this order: client certificate, service account token, OIDC token. */
  readonly authenticators: readonly Authenticator[];
  /** Undefined without `--tlsCertFile`: the secure xDS port and the webhooks are not served. */
  readonly serving: FileServing | undefined;
}

/**
 * The reference with its CA server disabled: the certificate files, re-read as they change, serve
 * the secure xDS port and the webhooks; callers are still authenticated as with a CA, by a
 * client certificate (verified against `--caCertFile`, the only roots there are; none requested
 * without it), a Kubernetes service account token (TokenReview, TOKEN_AUDIENCES) or the OIDC
 * issuer of JWT_RULE (or TOKEN_ISSUER/AUDIENCE). Throws for a bad JWT_RULE, as the reference
 * refuses to start.
 */
export function setupCaDisabledWithManager(manager: Manager, options: CaDisabledSetupOptions): CaDisabledSecurity {
  const { tlsFiles, trustDomain } = options;
  const providers = tlsFiles ? fileServingProviders(tlsFiles) : undefined;
  const roots = newFileRoots({ trustDomain, provider: providers?.roots ?? null, log: options.logging.scope('ca') });
  if (providers?.roots) manager.add(runnableOf('client-certificate-roots', () => roots.watch(), { group: 'httpServer' }));
  const authenticators = newCaAuthenticators({
    authentication: caAuthenticationFromSettings(options.settings),
    trustDomain,
    trustBundles: roots,
    clock: manager.clock,
    ...(options.kubeConfig ? { kubeConfig: options.kubeConfig } : {}),
  });
  const serving = providers ? { credentials: () => servingCredentials(providers, options.cipherSuites), servingProviders: () => providers } : undefined;
  return { authenticators, serving };
}
