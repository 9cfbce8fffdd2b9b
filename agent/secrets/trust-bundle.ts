import { createHash, X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { experimental } from '@grpc/grpc-js';
import type { Clock, Logger, TimerHandle } from '../../runtime/index.js';
import { decodePemBlocks, encodePem } from '../../pki/index.js';
import { errorMessage } from '../../runtime/index.js';

type CaListener = Parameters<experimental.CertificateProvider['addCaCertificateListener']>[0];

export interface AgentTrustBundleOptions {
  /** The mounted root file (the published `mesh-ca-root-cert` ConfigMap, CA_ROOT_CA, XDS_ROOT_CA), re-read as it changes. */
  readonly file?: string;
  /** Roots known from the start (tests, a bundle given inline). */
  readonly initialPem?: string;
  /** How often the file is re-read; default 2 s. */
  readonly pollMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
}

/**
 * The roots the agent trusts for its own connections to the control plane (xDS and the CA): those
 * of the mounted root file, re-read as it changes, and those of the CA's latest answer. A grpc-js
 * certificate provider, so every new connection uses the bundle of the moment: after the CA moves
 * to a new root, reconnections verify the daemon's new certificate.
 */
export interface AgentTrustBundle extends experimental.CertificateProvider {
  /** The trusted roots, PEM, deduplicated. */
  current(): string;
  /** Roots the CA sent with a certificate (the trust bundle at the end of its chain). */
  learn(rootsPem: string): void;
  /** Reads the file once now and keeps watching it until `stop`. */
  start(): Promise<void>;
  stop(): void;
}

/** The distinct certificates of PEM texts, in order of first appearance, as one PEM text. */
function unionPem(texts: readonly string[]): string {
  const seen = new Set<string>();
  let out = '';
  for (const text of texts) {
    for (const block of decodePemBlocks(text)) {
      if (block.label !== 'CERTIFICATE') continue;
      const digest = createHash('sha256').update(block.der).digest('hex');
      if (seen.has(digest)) continue;
      try {
        new X509Certificate(block.der);
      } catch {
        continue;
      }
      seen.add(digest);
      out += encodePem('CERTIFICATE', block.der);
    }
  }
  return out;
}

export function newAgentTrustBundle(options: AgentTrustBundleOptions): AgentTrustBundle {
  const { clock, log } = options;
  const pollMs = options.pollMs ?? 2000;
  let fromFile = '';
  let fromCa = '';
  let current = unionPem([options.initialPem ?? '']);
  let timer: TimerHandle | undefined;
  let stopped = false;
  const listeners = new Set<CaListener>();

  const publish = (): void => {
    const next = unionPem([options.initialPem ?? '', fromFile, fromCa]);
    if (next === current) return;
    current = next;
    log.info({ roots: decodePemBlocks(next).length }, 'control plane trust bundle changed');
    for (const listener of listeners) listener(next === '' ? null : { caCertificate: Buffer.from(next) });
  };

  const readFileRoots = async (): Promise<void> => {
    if (!options.file) return;
    try {
      fromFile = await readFile(options.file, 'utf8');
    } catch (error) {
      log.debug({ file: options.file, error: errorMessage(error) }, 'root file not readable');
    }
    publish();
  };

  const poll = (): void => {
    if (stopped) return;
    timer = clock.setTimer(() => void readFileRoots().finally(poll), pollMs);
  };

  return {
    current: () => current,
    learn(rootsPem) {
      fromCa = rootsPem;
      publish();
    },
    async start() {
      await readFileRoots();
      poll();
    },
    stop() {
      stopped = true;
      timer?.cancel();
    },
    addCaCertificateListener(listener) {
      listeners.add(listener);
      // grpc-js registers before it asks: answer after the registration returns.
      queueMicrotask(() => listener(current === '' ? null : { caCertificate: Buffer.from(current) }));
    },
    removeCaCertificateListener(listener) {
      listeners.delete(listener);
    },
    addIdentityCertificateListener: () => undefined,
    removeIdentityCertificateListener: () => undefined,
  };
}

/** A fixed key and chain as a grpc-js identity provider (a provisioned certificate presented to the control plane). */
export function staticIdentity(material: { privateKey: string; certificateChain: string }): experimental.CertificateProvider {
  return {
    addCaCertificateListener: () => undefined,
    removeCaCertificateListener: () => undefined,
    addIdentityCertificateListener: (listener) =>
      queueMicrotask(() => listener({ certificate: Buffer.from(material.certificateChain), privateKey: Buffer.from(material.privateKey) })),
    removeIdentityCertificateListener: () => undefined,
  };
}
