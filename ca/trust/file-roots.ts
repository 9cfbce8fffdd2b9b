import type { experimental } from '@grpc/grpc-js';
import { errorMessage, type Logger } from '../../runtime/index.js';
import { parseCertificatesPem, type CertificateInfo } from '../x509/certificate-info.js';
import type { TrustBundleSet } from './trust-bundle-set.js';

/**
 * Our trust domain's roots when the daemon runs no CA: `--caCertFile`, as the file watcher the
 * TLS listeners request client certificates with reads it (none without the file). Client
 * certificates of our trust domain verify against them; those of any other domain against none.
 */
export interface FileRoots extends Pick<TrustBundleSet, 'rootsFor'> {
  /** Follows the file (the watcher reads it while someone listens); returns the stop. */
  watch(): () => void;
}

export interface FileRootsOptions {
  readonly trustDomain: string;
  /** The `--caCertFile` provider; null without the file. */
  readonly provider: experimental.CertificateProvider | null;
  /** A file that cannot be read or holds no certificate is reported here (scope `ca`). */
  readonly log: Logger;
}

/**
 * The roots as last read: a read that fails keeps the roots read before it (a file being
 * replaced must not lock every proxy out), and says so once per change of the file.
 */
export function newFileRoots(options: FileRootsOptions): FileRoots {
  const { trustDomain, provider, log } = options;
  let roots: readonly CertificateInfo[] = [];
  let lastText: string | undefined;
  const onUpdate: experimental.CaCertificateUpdateListener = (update) => {
    const text = update ? update.caCertificate.toString('utf8') : '';
    if (text === lastText) return;
    lastText = text;
    if (!update) {
      log.error({ trustDomain, roots: roots.length }, '--caCertFile cannot be read: client certificates verify against the roots read before');
      return;
    }
    try {
      roots = parseCertificatesPem(text, '--caCertFile');
      log.info({ trustDomain, roots: roots.length }, 'client certificate roots read from --caCertFile');
    } catch (error) {
      log.error(
        { trustDomain, roots: roots.length, error: errorMessage(error) },
        '--caCertFile holds no valid certificate: client certificates verify against the roots read before',
      );
    }
  };
  return {
    rootsFor: (domain) => (domain === trustDomain ? roots : []),
    watch() {
      if (!provider) return () => undefined;
      provider.addCaCertificateListener(onUpdate);
      return () => provider.removeCaCertificateListener(onUpdate);
    },
  };
}
