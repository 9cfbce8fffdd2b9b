import { readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';

/** The files `validate` and `analyze` read from a folder. */
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/** A folder's `.yaml`, `.yml` and `.json` files, sorted by name; sub-folders' too when `recursive`. */
export async function walkConfigFiles(directory: string, recursive: boolean): Promise<string[]> {
  const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...(await walkConfigFiles(path, recursive)));
    } else if (EXTENSIONS.has(extname(entry.name).toLowerCase())) files.push(path);
  }
  return files;
}

/** A `List` (as `kubectl get -o yaml` prints) stands for its items; any other document for itself. */
export function listItems(document: unknown): unknown[] {
  const { kind, items } = (typeof document === 'object' && document !== null ? document : {}) as { kind?: unknown; items?: unknown };
  if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items)) return items as unknown[];
  return [document];
}
