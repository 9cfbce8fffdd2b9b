import { newRealClock, type Clock, type Logger, type MeshMetrics } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { CaStore } from '../store/ca-store.js';
import { newCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { loadKeyCertBundle, type KeyCertBundle } from './key-cert-bundle.js';
import { readPluggedCa } from './plugged-ca.js';
import { newRootRotator, type RootRotator } from './root-rotator.js';
import { newSelfSignedMaterial } from './self-signed-root.js';
import type { CaKeyType } from './signer.js';

/** What the daemon's own CA is told by the settings (`ca-settings.ts` maps them). */
export interface MeshCaSettings {
  /** ENABLE_CA_SERVER. */
  readonly enabled: boolean;
  /** ROOT_CA_DIR: plugged-in CA material there wins over the self-signed CA. */
  readonly rootCaDir: string;
  /** DEFAULT_WORKLOAD_CERT_TTL: the lifetime of a workload certificate whose CSR asks for none. */
  readonly defaultWorkloadCertTtlMs: number;
  /** MAX_WORKLOAD_CERT_TTL. */
  readonly maxWorkloadCertTtlMs: number;
  readonly selfSignedRoot: SelfSignedRootSettings;
}

/** The self-signed root: its key and lifetime, and how its expiry is checked (the CASERVER_* settings). */
export interface SelfSignedRootSettings {
  /** CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE. */
  readonly rsaKeySize: number;
  /** CASERVER_SELF_SIGNED_CA_CERT_TTL. */
  readonly certTtlMs: number;
  /** CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL; zero or negative: no rotation. */
  readonly checkIntervalMs: number;
  /** CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE. */
  readonly gracePeriodPercentile: number;
  /** CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR. */
  readonly enableJitter: boolean;
}

export interface MeshCaOptions {
  readonly caSettings: MeshCaSettings;
  /** The `pkica` scope. */
  readonly log: Logger;
  /** The `rootcertrotator` scope; `log` when absent. */
  readonly rotatorLog?: Logger;
  readonly metrics?: MeshMetrics<'pilot-discovery'>;
  readonly clock?: Clock;
  /**
   * Where a self-signed CA is kept across restarts: `newKubeSecretCaStore` (the
   * `mesh-ca-secret` secret) in Kubernetes, `newFolderCaStore` in local mode.
   */
  readonly selfSignedStore: CaStore;
  /** Default `cluster.local`; also the organization of a self-signed root. */
  readonly trustDomain?: string;
  /** A new self-signed root's key: RSA of CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE bits (default) or ECDSA P-256. */
  readonly selfSignedKeyType?: CaKeyType;
  /** Jitter source in [0, 1). */
  readonly random?: () => number;
}

export interface MeshCa {
  readonly authority: CertificateAuthority;
  readonly mode: 'plugged' | 'self-signed';
  readonly trustDomain: string;
  /** Checks and rotates a self-signed root; undefined for a plugged CA or a non-positive check interval. */
  readonly rotator: RootRotator | undefined;
}

/**
 * The daemon's CA, or undefined when ENABLE_CA_SERVER is false. Plugged-in material from
 * ROOT_CA_DIR wins; otherwise the self-signed CA of the store, created on first start.
 */
export async function newMeshCa(options: MeshCaOptions): Promise<MeshCa | undefined> {
  const { caSettings, log } = options;
  const { selfSignedRoot } = caSettings;
  if (!caSettings.enabled) {
    log.info('the CA server is disabled (ENABLE_CA_SERVER=false)');
    return undefined;
  }
  const clock = options.clock ?? newRealClock();
  const trustDomain = options.trustDomain ?? 'cluster.local';
  const authority = (bundle: KeyCertBundle): CertificateAuthority =>
    newCertificateAuthority({
      bundle,
      clock,
      defaultTtlMs: caSettings.defaultWorkloadCertTtlMs,
      maxTtlMs: caSettings.maxWorkloadCertTtlMs,
      ...(options.metrics ? { metrics: options.metrics } : {}),
    });

  const rootCaDir = caSettings.rootCaDir;
  const plugged = await readPluggedCa(rootCaDir);
  if (plugged) {
    const bundle = loadKeyCertBundle(plugged);
    log.info({ dir: rootCaDir, intermediates: bundle.intermediates.length, roots: bundle.roots.length }, 'using the plugged-in CA');
    return { authority: authority(bundle), mode: 'plugged', trustDomain, rotator: undefined };
  }

  const store = options.selfSignedStore;
  let stored = await store.load();
  if (stored) {
    log.info({ store: store.description }, 'loaded the self-signed CA');
  } else {
    const material = await newSelfSignedMaterial({
      keyType: options.selfSignedKeyType ?? 'rsa',
      rsaKeySize: selfSignedRoot.rsaKeySize,
      trustDomain,
      ttlMs: selfSignedRoot.certTtlMs,
      nowMs: clock.now(),
    });
    try {
      stored = await store.save(material, undefined);
      log.info({ store: store.description }, 'created a self-signed CA');
    } catch (err) {
      if (!(err instanceof CaError && err.code === 'ca-store-conflict')) throw err;
      stored = await store.load();
      if (!stored) throw err;
      log.info({ store: store.description }, 'another replica created the self-signed CA first; using it');
    }
  }
  const ca = authority(loadKeyCertBundle(stored.material));

  const checkIntervalMs = selfSignedRoot.checkIntervalMs;
  let rotator: RootRotator | undefined;
  if (checkIntervalMs > 0) {
    rotator = newRootRotator({
      ca,
      store,
      clock,
      log: options.rotatorLog ?? log,
      checkIntervalMs,
      gracePeriodPercentile: selfSignedRoot.gracePeriodPercentile,
      caCertTtlMs: selfSignedRoot.certTtlMs,
      enableJitter: selfSignedRoot.enableJitter,
      trustDomain,
      ...(options.metrics ? { metrics: options.metrics } : {}),
      ...(options.random ? { random: options.random } : {}),
    });
    // A root already inside its grace period (the daemon was down a long time) is rotated now.
    await rotator.checkNow();
  }
  return { authority: ca, mode: 'self-signed', trustDomain, rotator };
}
