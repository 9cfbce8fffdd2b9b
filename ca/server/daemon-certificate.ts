import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import type { experimental } from '@grpc/grpc-js';
import type { Clock, Logger, TimerHandle } from '../../runtime/index.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import { errorMessage } from '../../runtime/index.js';

type CertificateProvider = experimental.CertificateProvider;
type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

export interface DaemonServerNames {
  readonly dnsNames: readonly string[];
  readonly ips: readonly string[];
}

/** Where the daemon is reached: the namespace of its service, and further host names and IPs. */
export interface DaemonHosts {
  /** POD_NAMESPACE. */
  readonly namespace: string;
  /** MESHD_CUSTOM_HOST, split on commas. */
  readonly customHosts: readonly string[];
}

/** The names the daemon's serving certificate carries: its service names, localhost, MESHD_CUSTOM_HOST. */
export function daemonServerNames(hosts: DaemonHosts): DaemonServerNames {
  const { namespace, customHosts } = hosts;
  const dnsNames = [`meshd.${namespace}.svc`, `meshd.${namespace}.svc.cluster.local`, 'localhost', ...customHosts.filter((h) => isIP(h) === 0)];
  const ips = ['127.0.0.1', ...customHosts.filter((h) => isIP(h) !== 0)];
  return { dnsNames: [...new Set(dnsNames)], ips: [...new Set(ips)] };
}

export interface DaemonCertificateOptions extends DaemonServerNames {
  readonly ca: CertificateAuthority;
  readonly ttlMs: number;
  readonly clock: Clock;
  readonly log: Logger;
  /** Renew once this part of the lifetime has passed; default 0.5. */
  readonly renewRatio?: number;
}

export interface DaemonKeyCertificate {
  /** The leaf and intermediates, PEM: what a TLS server sends. */
  readonly certChainPem: string;
  readonly keyPem: string;
  /** What clients are verified against: the CA's trust bundle. */
  readonly rootsPem: string;
  readonly notAfterMs: number;
}

/**
 * The daemon's serving certificate, signed by its own CA with a fresh key, renewed before it
 * expires. It is a grpc-js certificate provider, so servers pick up each renewal.
 */
export interface DaemonCertificate extends CertificateProvider {
  current(): DaemonKeyCertificate;
  /** Issues a new key and certificate now (also picks up a rotated trust bundle). */
  renew(): void;
  /** Schedules renewals on the clock. */
  start(): void;
  stop(): void;
}

export function newDaemonCertificate(options: DaemonCertificateOptions): DaemonCertificate {
  const { ca, clock, log } = options;
  const renewRatio = options.renewRatio ?? 0.5;
  const caListeners = new Set<CaListener>();
  const identityListeners = new Set<IdentityListener>();
  let timer: TimerHandle | undefined;
  let running = false;

  const issue = (): DaemonKeyCertificate => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const issued = ca.issue({
      subjectPublicKeyInfo: createPublicKey(privateKey).export({ format: 'der', type: 'spki' }),
      sans: { dnsNames: options.dnsNames, ips: options.ips },
      ttlMs: options.ttlMs,
    });
    return {
      certChainPem: issued.certChainPem.slice(0, -1).join(''),
      keyPem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      rootsPem: ca.rootBundlePem(),
      notAfterMs: issued.notAfterMs,
    };
  };

  let current = issue();
  const issuedAt = { ms: clock.now() };

  const notify = (): void => {
    const snapshot = current;
    for (const listener of caListeners) listener({ caCertificate: Buffer.from(snapshot.rootsPem) });
    for (const listener of identityListeners) listener({ certificate: Buffer.from(snapshot.certChainPem), privateKey: Buffer.from(snapshot.keyPem) });
  };

  const schedule = (): void => {
    timer?.cancel();
    if (!running) return;
    const delay = Math.max(0, issuedAt.ms + (current.notAfterMs - issuedAt.ms) * renewRatio - clock.now());
    timer = clock.setTimer(() => {
      try {
        renew();
      } catch (err) {
        log.error({ error: errorMessage(err) }, 'renewing the daemon certificate failed');
        timer = clock.setTimer(() => schedule(), 60_000);
      }
    }, delay);
  };

  const renew = (): void => {
    current = issue();
    issuedAt.ms = clock.now();
    log.info({ notAfter: new Date(current.notAfterMs).toISOString(), dnsNames: options.dnsNames }, 'issued the daemon serving certificate');
    notify();
    schedule();
  };

  return {
    current: () => current,
    renew,
    start: () => {
      running = true;
      schedule();
    },
    stop: () => {
      running = false;
      timer?.cancel();
      timer = undefined;
    },
    // grpc-js registers its watcher right after adding these listeners: deliver on a later tick.
    addCaCertificateListener: (listener) => {
      caListeners.add(listener);
      const snapshot = current;
      queueMicrotask(() => caListeners.has(listener) && listener({ caCertificate: Buffer.from(snapshot.rootsPem) }));
    },
    removeCaCertificateListener: (listener) => {
      caListeners.delete(listener);
    },
    addIdentityCertificateListener: (listener) => {
      identityListeners.add(listener);
      const snapshot = current;
      queueMicrotask(
        () => identityListeners.has(listener) && listener({ certificate: Buffer.from(snapshot.certChainPem), privateKey: Buffer.from(snapshot.keyPem) }),
      );
    },
    removeIdentityCertificateListener: (listener) => {
      identityListeners.delete(listener);
    },
  };
}
