import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CaError } from '../ca-error.js';
import { CA_FILES } from '../store/ca-store.js';
import type { CaMaterial } from './key-cert-bundle.js';
import { errorCode } from '../../runtime/index.js';

/**
 * Plugged-in CA material from ROOT_CA_DIR (the mounted `cacerts` secret), or undefined when the
 * folder has no CA key and certificate. `root-cert.pem` is then required; `cert-chain.pem`
 * (the signing certificate and intermediates up to the root) is needed for intermediate CAs.
 */
export async function readPluggedCa(dir: string): Promise<CaMaterial | undefined> {
  const read = async (name: string): Promise<string | undefined> => {
    try {
      return await readFile(join(dir, name), 'utf8');
    } catch (err) {
      const code = errorCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw err;
    }
  };
  const [caCertPem, caKeyPem, certChainPem, rootCertPem] = await Promise.all(
    [CA_FILES.caCert, CA_FILES.caKey, CA_FILES.certChain, CA_FILES.rootCert].map(read),
  );
  if (caCertPem === undefined && caKeyPem === undefined) return undefined;
  if (caCertPem === undefined || caKeyPem === undefined || rootCertPem === undefined) {
    throw new CaError('ca-material-invalid', `${dir} needs ${CA_FILES.caCert}, ${CA_FILES.caKey} and ${CA_FILES.rootCert} together`);
  }
  return { caCertPem, caKeyPem, certChainPem: certChainPem ?? '', rootCertPem };
}
