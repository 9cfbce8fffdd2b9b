import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { renderCrdManifests } from './crd-manifests.js';

/** Where the committed manifests live, relative to the repository root. */
export const CRD_MANIFESTS_FILE = join('crds', 'generated', 'crds.yaml');

/**
 * Writes the rendered CRD manifests to `path` when its content differs; says whether it changed.
 * `crds/crd-manifests.test.ts` calls it when REFRESH_GOLDEN=1 is set.
 */
export async function writeCrdManifests(path: string): Promise<boolean> {
  const rendered = renderCrdManifests();
  const current = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (current === rendered) return false;
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, rendered);
  return true;
}
