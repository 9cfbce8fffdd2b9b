import { availableParallelism } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { newInitializer, runnableOf, UsageError, type Logging, type Manager, type MeshMetrics, type Runnable, type Settings } from '../runtime/index.js';
import type { Authenticator } from './authn/authenticator.js';
import { newBundleFetcher } from './trust/bundle-fetcher.js';
import { newCaAuthenticators } from './authn/ca-authenticators.js';
import { newCaEndpoint, type CaEndpoint, type TlsFiles } from './server/ca-server.js';
import { newFolderCaStore } from './store/folder-ca-store.js';
import { newKubeSecretCaStore } from './store/kube-secret-ca-store.js';
import { newMeshSigner } from './authority/new-mesh-signer.js';
import { newSigningPool } from './authority/signing-pool.js';
import {
  caAuthenticationFromSettings,
  daemonServingFromSettings,
  externalSigningFromSettings,
  meshCaSettingsFromSettings,
  spiffeBundleEndpointsFromSettings,
} from './ca-settings.js';
import { addRootCertPublisher } from './trust/root-cert-publisher.js';
import { newTrustBundleSet } from './trust/trust-bundle-set.js';

/** Where the self-signed CA is kept in local mode, so a restart keeps the same root. */
export const LOCAL_CA_DIR = './var/lib/mesh/ca';

export interface CaSetupOptions {
  /** Read through `ca-settings.ts` only. */
  readonly settings: Settings<'pilot-discovery'>;
  /** Kubernetes mode: the self-signed CA lives in the `mesh-ca-secret` secret, roots are published, tokens reviewed. */
  readonly kubeConfig?: KubeConfig;
  /** `--namespace`: where the CA secret lives. */
  readonly namespace: string;
  /** `--clusterID`: the cluster whose workloads this CA serves. */
  readonly clusterId: string;
  /** From the mesh config: workload identities are `spiffe://<trust domain>/ns/<ns>/sa/<sa>`. */
  readonly trustDomain: string;
  /** `--tls-cipher-suites`. */
  readonly cipherSuites: readonly string[];
  /** `--tlsCertFile`/`--tlsKeyFile` (and `--caCertFile`): the serving certificate from files. */
  readonly tlsFiles?: TlsFiles;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** The process's logging: scopes `ca`, `rootcertrotator`, `serverca`, `trustBundle`. */
  readonly logging: Logging;
}

/** The CA on the xDS TLS listener: its service and serving credentials, and the callers it recognises. */
export interface CaSecurity {
  /** Empty until the CA has loaded; the TLS listener, the only reader of client certificates, binds after that. */
  readonly authenticators: readonly Authenticator[];
  /** Throws until the CA has loaded (`ready`). */
  endpoint(): CaEndpoint;
  ready(signal: AbortSignal): Promise<void>;
}

/**
 * Registers the certificate authority with the manager: self-signed (kept in the `mesh-ca-secret`
 * secret, or a local folder without an orchestrator) or plugged from ROOT_CA_DIR, or a registration
 * authority (EXTERNAL_CA). Its material may need the API server: it is loaded by a start-up step
 * that retries with backoff while the API server is away (the daemon stays up, not ready).
 * Undefined when ENABLE_CA_SERVER is false.
 */
export function setupCaWithManager(manager: Manager, options: CaSetupOptions): CaSecurity | undefined {
  const { settings, kubeConfig, logging, metrics } = options;
  const log = logging.scope('ca');
  const caSettings = meshCaSettingsFromSettings(settings);
  if (!caSettings.enabled) {
    log.info('the CA server is disabled (ENABLE_CA_SERVER=false)');
    return undefined;
  }
  const authenticators: Authenticator[] = [];
  const bootstrap = newInitializer<CaEndpoint>({
    name: 'certificate-authority',
    group: 'httpServer',
    clock: manager.clock,
    log,
    // Settings that can be refused are mapped where the step first needs them, not up front: a bad
    // value fails the step in its place among the step's other errors.
    init: async () => {
      const selfSignedStore = kubeConfig ? newKubeSecretCaStore({ kubeConfig, namespace: options.namespace }) : newFolderCaStore(LOCAL_CA_DIR);
      const externalSigning = externalSigningFromSettings(settings);
      const meshSigner = await newMeshSigner({
        caSettings,
        ...(externalSigning ? { externalSigning } : {}),
        log,
        rotatorLog: logging.scope('rootcertrotator'),
        metrics,
        selfSignedStore,
        trustDomain: options.trustDomain,
        ...(kubeConfig ? { kubeConfig } : {}),
      });
      if (!meshSigner) throw new UsageError('the CA server is enabled but no signer is configured');
      const ca = meshSigner.kind === 'ca' ? meshSigner.ca.authority : undefined;
      // Our own CA signs on every core while CSRs come in numbers; a registration authority waits on another signer.
      const signingPool = ca ? newSigningPool({ ca, threads: availableParallelism(), clock: manager.clock }) : undefined;
      if (signingPool) manager.add(runnableOf('ca-signing-threads', () => () => signingPool.close()));
      if (!ca && !options.tlsFiles) {
        throw new UsageError("EXTERNAL_CA=MESHD_RA_ORCH_API needs the daemon's serving certificate: give --tlsCertFile and --tlsKeyFile");
      }
      // Client certificates of federated trust domains verify against their own fetched roots.
      const trustBundles = newTrustBundleSet({ trustDomain: meshSigner.trustDomain, localRoots: meshSigner.localRoots, log });
      const bundleEndpoints = spiffeBundleEndpointsFromSettings(settings);
      authenticators.push(
        ...newCaAuthenticators({
          authentication: caAuthenticationFromSettings(settings),
          ...(ca ? { ca } : {}),
          trustDomain: meshSigner.trustDomain,
          clock: manager.clock,
          trustBundles,
          ...(kubeConfig ? { kubeConfig } : {}),
        }),
      );
      const endpoint = newCaEndpoint({
        ...(ca ? { ca } : {}),
        signer: signingPool ?? meshSigner.signer,
        authenticators,
        metrics,
        log: logging.scope('serverca'),
        serving: daemonServingFromSettings(settings),
        cipherSuites: options.cipherSuites,
        knownClusterIds: [options.clusterId],
        ...(options.tlsFiles ? { tlsFiles: options.tlsFiles } : {}),
      });
      if (meshSigner.kind === 'ca' && meshSigner.ca.rotator) manager.add(meshSigner.ca.rotator);
      if (bundleEndpoints.length > 0) {
        manager.add(newBundleFetcher({ endpoints: bundleEndpoints, trustBundles, clock: manager.clock, log: logging.scope('trustBundle') }));
      }
      manager.add(servingCertificateRenewal(endpoint));
      if (kubeConfig) addRootCertPublisher({ manager, kubeConfig, ca: meshSigner.localRoots, log });
      return endpoint;
    },
  });
  manager.add(bootstrap);
  return { authenticators, endpoint: () => bootstrap.value(), ready: (signal) => bootstrap.waitForReady(signal) };
}

/** Keeps the daemon's serving certificate renewed while the daemon runs. */
function servingCertificateRenewal(endpoint: CaEndpoint): Runnable {
  return runnableOf('serving-certificate', () => endpoint.start(), { group: 'httpServer' });
}
