import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock, Logger } from '../../runtime/index.js';
import type { WorkloadCertificates, WorkloadSecrets } from './workload-certificates.js';

export interface FileMountedCertificatesOptions {
  /** The folder holding `cert-chain.pem`, `key.pem` and `root-cert.pem` (`./etc/certs`). */
  readonly dir: string;
  /** How often the files are read again to pick up a rotation. Default 5 s. */
  readonly pollMs?: number;
  readonly clock: Clock;
  readonly log: Logger;
}

/**
 * FILE_MOUNTED_CERTS: the workload certificate, key and roots come from mounted files instead of
 * the CA; they are read again periodically and a change is published like a rotation.
 */
export function newFileMountedCertificates(options: FileMountedCertificatesOptions): WorkloadCertificates {
  const { clock, log } = options;
  const pollMs = options.pollMs ?? 5000;
  let current: WorkloadSecrets | undefined;
  let timer: { cancel(): void } | undefined;
  let stopped = false;
  const listeners: ((secrets: WorkloadSecrets) => void)[] = [];

  const read = async (): Promise<WorkloadSecrets> => {
    const [certificateChain, privateKey, roots] = await Promise.all(
      ['cert-chain.pem', 'key.pem', 'root-cert.pem'].map((file) => readFile(join(options.dir, file), 'utf8')),
    );
    const leaf = new X509Certificate(certificateChain as string);
    return { certificateChain: certificateChain as string, privateKey: privateKey as string, roots: roots as string, notAfter: Date.parse(leaf.validTo) };
  };

  const poll = (): void => {
    if (stopped) return;
    timer = clock.setTimer(() => {
      read().then(
        (secrets) => {
          if (secrets.certificateChain !== current?.certificateChain || secrets.roots !== current?.roots || secrets.privateKey !== current?.privateKey) {
            current = secrets;
            log.info({ dir: options.dir }, 'mounted certificates changed');
            for (const listener of listeners) listener(secrets);
          }
          poll();
        },
        (error: Error) => {
          log.warn({ dir: options.dir, error: error.message }, 'cannot read the mounted certificates; keeping the current ones');
          poll();
        },
      );
    }, pollMs);
  };

  return {
    async start() {
      for (let attempt = 0; ; attempt++) {
        try {
          current = await read();
          break;
        } catch (error) {
          if (stopped || attempt >= 50) throw error;
          await new Promise<void>((resolve) => clock.setTimer(resolve, 200));
        }
      }
      for (const listener of listeners) listener(current);
      poll();
      return current;
    },
    current: () => current,
    onChange: (listener) => void listeners.push(listener),
    stop() {
      stopped = true;
      timer?.cancel();
    },
  };
}
