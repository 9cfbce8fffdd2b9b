import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CaError } from '../ca-error.js';
import { CA_FILES, type CaStore, type StoredCa } from './ca-store.js';
import type { CaMaterial } from '../authority/key-cert-bundle.js';
import { errorCode } from '../../runtime/index.js';

/** CA material as the four PEM files of a folder; the key file is readable by its owner only. */
export function newFolderCaStore(dir: string): CaStore {
  const read = async (name: string): Promise<string | undefined> => {
    try {
      return await readFile(join(dir, name), 'utf8');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return undefined;
      throw err;
    }
  };
  const load = async (): Promise<StoredCa | undefined> => {
    const [caCertPem, caKeyPem, certChainPem, rootCertPem] = await Promise.all(
      [CA_FILES.caCert, CA_FILES.caKey, CA_FILES.certChain, CA_FILES.rootCert].map(read),
    );
    if (caCertPem === undefined || caKeyPem === undefined) return undefined;
    const material = { caCertPem, caKeyPem, certChainPem: certChainPem ?? '', rootCertPem: rootCertPem ?? caCertPem };
    return { material, version: versionOf(material) };
  };
  return {
    description: `folder ${dir}`,
    load,
    save: async (material, previous) => {
      const current = await load();
      if (current?.version !== previous) throw new CaError('ca-store-conflict', `the CA in ${dir} changed meanwhile`);
      await mkdir(dir, { recursive: true, mode: 0o700 });
      // The key goes last: load() treats a folder without a key as empty.
      const files: Array<[string, string, number]> = [
        [CA_FILES.caCert, material.caCertPem, 0o644],
        [CA_FILES.certChain, material.certChainPem, 0o644],
        [CA_FILES.rootCert, material.rootCertPem, 0o644],
        [CA_FILES.caKey, material.caKeyPem, 0o600],
      ];
      for (const [name, content, mode] of files) {
        const tmp = join(dir, `.${name}.tmp`);
        await writeFile(tmp, content, { mode });
        await rename(tmp, join(dir, name));
      }
      return { material, version: versionOf(material) };
    },
  };
}

function versionOf(material: CaMaterial): string {
  return createHash('sha256').update(material.caCertPem).update('\0').update(material.rootCertPem).digest('hex');
}
