import type { Clock, Logger, MeshMetrics, Runnable } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import type { CaStore, StoredCa } from '../store/ca-store.js';
import { recordExpiry, type CertificateAuthority } from './certificate-authority.js';
import { loadKeyCertBundle, type CaMaterial } from './key-cert-bundle.js';
import { rotateSelfSignedMaterial } from './self-signed-root.js';
import { errorMessage } from '../../runtime/index.js';

export interface RootRotatorOptions {
  readonly ca: CertificateAuthority;
  readonly store: CaStore;
  readonly clock: Clock;
  /** The `rootcertrotator` scope. */
  readonly log: Logger;
  /** CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL; must be positive. */
  readonly checkIntervalMs: number;
  /** CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE. */
  readonly gracePeriodPercentile: number;
  /** CASERVER_SELF_SIGNED_CA_CERT_TTL, the lifetime of a new root. */
  readonly caCertTtlMs: number;
  /** CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: wait a random part of an interval before the first tick. */
  readonly enableJitter: boolean;
  readonly trustDomain: string;
  readonly metrics?: MeshMetrics<'pilot-discovery'>;
  /** In [0, 1); Math.random by default. */
  readonly random?: () => number;
}

export type RootCheckResult = 'unchanged' | 'rotated' | 'reloaded' | 'pruned';

export interface RootRotator extends Runnable {
  /**
   * One check: adopt material another replica wrote, rotate when the root is in its grace
   * period, drop expired roots from the bundle.
   */
  checkNow(): Promise<RootCheckResult>;
}

/** Keeps the self-signed root fresh: checks every interval, rotates inside the grace period. */
export function newRootRotator(options: RootRotatorOptions): RootRotator {
  const { ca, store, clock, log } = options;
  if (!(options.checkIntervalMs > 0)) throw new CaError('ca-material-invalid', 'the root check interval must be positive');

  const adopt = (stored: StoredCa): void => {
    ca.setBundle(loadKeyCertBundle(stored.material));
  };

  const checkNow = async (): Promise<RootCheckResult> => {
    const now = clock.now();
    let stored = await store.load();
    let result: RootCheckResult = 'unchanged';
    if (!stored) {
      log.warn({ store: store.description }, 'stored CA material is gone; writing it back');
      stored = await store.save(ca.bundle().material, undefined);
    } else if (!sameMaterial(stored.material, ca.bundle().material)) {
      adopt(stored);
      log.info({ store: store.description }, 'adopted CA material written by another replica');
      result = 'reloaded';
    }
    const root = ca.bundle().signingCert;
    const lifetime = root.notAfterMs - root.notBeforeMs;
    const remaining = root.notAfterMs - now;
    if (remaining < (lifetime * options.gracePeriodPercentile) / 100) {
      const rotated = rotateSelfSignedMaterial(stored.material, { trustDomain: options.trustDomain, ttlMs: options.caCertTtlMs, nowMs: now });
      const bundle = loadKeyCertBundle(rotated);
      try {
        await store.save(rotated, stored.version);
      } catch (err) {
        if (!(err instanceof CaError && err.code === 'ca-store-conflict')) throw err;
        const winner = await store.load();
        if (winner) adopt(winner);
        log.info({ store: store.description }, 'another replica rotated the root first; adopted its root');
        return 'reloaded';
      }
      ca.setBundle(bundle);
      log.info(
        { oldExpiry: new Date(root.notAfterMs).toISOString(), newExpiry: new Date(bundle.rootExpiryMs).toISOString(), roots: bundle.roots.length },
        'rotated the self-signed root certificate',
      );
      return 'rotated';
    }
    const live = ca.bundle().roots.filter((r) => r.notAfterMs > now);
    if (live.length > 0 && live.length < ca.bundle().roots.length) {
      const pruned = { ...stored.material, rootCertPem: live.map((r) => r.pem).join('') };
      const bundle = loadKeyCertBundle(pruned);
      try {
        await store.save(pruned, stored.version);
      } catch (err) {
        if (!(err instanceof CaError && err.code === 'ca-store-conflict')) throw err;
        return result;
      }
      ca.setBundle(bundle);
      log.info({ roots: bundle.roots.length }, 'removed expired roots from the trust bundle');
      return 'pruned';
    }
    recordExpiry(options.metrics, ca.bundle(), now);
    return result;
  };

  return {
    name: 'ca-root-rotator',
    checkNow,
    start: async (signal) => {
      const random = options.random ?? Math.random;
      try {
        if (options.enableJitter) {
          const jitterMs = Math.floor(random() * options.checkIntervalMs);
          log.info({ jitterMs }, 'jitter before the first root certificate check');
          await clock.sleep(jitterMs, signal);
        }
        for (;;) {
          await clock.sleep(options.checkIntervalMs, signal);
          try {
            await checkNow();
          } catch (err) {
            log.error({ error: errorMessage(err) }, 'root certificate check failed');
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        throw err;
      }
    },
  };
}

function sameMaterial(a: CaMaterial, b: CaMaterial): boolean {
  return a.caCertPem === b.caCertPem && a.caKeyPem === b.caKeyPem && a.rootCertPem === b.rootCertPem && a.certChainPem === b.certChainPem;
}
