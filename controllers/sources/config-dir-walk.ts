import type { BigIntStats } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isConfigFileName } from './config-file-parser.js';
import { errorMessage } from '../../runtime/index.js';

/** A config file found under the folder, with what tells whether it changed since the last look. */
export interface ConfigFileEntry {
  path: string;
  /** Device, inode, size, modification and change times (ns): differs whenever the content may. */
  signature: string;
  mtimeMs: number;
  size: number;
}

export interface ConfigDirListing {
  /** Sorted by path (code point order), the order in which duplicate keys are resolved. */
  files: ConfigFileEntry[];
  /** Folders (or files) that could not be read: files under them are unknown, not gone. */
  unreadable: { path: string; message: string }[];
}

/**
 * Lists every `.yaml`, `.yml` and `.json` file in `root` and its sub-folders. Names starting with a
 * dot are skipped: editors' temporary files, and the `..data` and `..<timestamp>` folders of a
 * mounted ConfigMap, whose files are reached through the top-level symbolic links instead.
 * Symbolic links are followed; a folder reached twice (a link loop) is read once. Throws when
 * `root` itself cannot be read.
 */
export async function listConfigFiles(root: string): Promise<ConfigDirListing> {
  const files: ConfigFileEntry[] = [];
  const unreadable: { path: string; message: string }[] = [];
  const visited = new Set<string>();

  const walk = async (dir: string, isRoot: boolean): Promise<void> => {
    let names: string[];
    try {
      const real = await realpath(dir);
      if (visited.has(real)) return;
      visited.add(real);
      names = (await readdir(dir)).filter((name) => !name.startsWith('.'));
    } catch (error) {
      if (isRoot) throw error;
      if (isNotFound(error)) return;
      unreadable.push({ path: dir, message: errorMessage(error) });
      return;
    }
    await Promise.all(
      names.map(async (name) => {
        const path = join(dir, name);
        let info: BigIntStats;
        try {
          info = await stat(path, { bigint: true });
        } catch (error) {
          // Removed meanwhile, or a dangling link: nothing to read.
          if (!isNotFound(error)) unreadable.push({ path, message: errorMessage(error) });
          return;
        }
        if (info.isDirectory()) return walk(path, false);
        if (!info.isFile() || !isConfigFileName(name)) return;
        files.push({
          path,
          signature: `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`,
          mtimeMs: Number(info.mtimeMs),
          size: Number(info.size),
        });
      }),
    );
  };

  await walk(root, true);
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, unreadable };
}

function isNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
