import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { pack } from 'tar-stream';

/** The archive's top folder: `bug-report/versions`, `bug-report/cluster/…`. */
export const ARCHIVE_ROOT = 'bug-report';

/**
 * The report's files as they are gathered, by path under the archive's root. Once sealed (the
 * gathering's time ran out), late answers are dropped: the archive holds what was there.
 */
export interface ReportTree {
  add(path: string, content: string): void;
  /** Appends to a file (the report's own log). */
  append(path: string, content: string): void;
  seal(): void;
  readonly sealed: boolean;
  files(): ReadonlyMap<string, string>;
}

export function newReportTree(): ReportTree {
  const files = new Map<string, string>();
  let sealed = false;
  return {
    add(path, content) {
      if (!sealed) files.set(path, content);
    },
    append(path, content) {
      files.set(path, (files.get(path) ?? '') + content);
    },
    seal() {
      sealed = true;
    },
    get sealed() {
      return sealed;
    },
    files: () => files,
  };
}

/** Writes the tree under `<parent>/bug-report/`. */
export async function writeTree(tree: ReportTree, parent: string): Promise<void> {
  for (const [path, content] of [...tree.files()].sort(([a], [b]) => a.localeCompare(b))) {
    const target = join(parent, ARCHIVE_ROOT, path);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  }
}

/** The tree as a gzipped tar of `bug-report/…` (paths relative to the tree's parent, as the reference's). */
export async function writeArchive(tree: ReportTree, archivePath: string, now: Date): Promise<void> {
  const tar = pack();
  const directories = new Set<string>();
  const entries = [...tree.files()].sort(([a], [b]) => a.localeCompare(b));
  const feed = (async () => {
    for (const [path, content] of entries) {
      const parts = path.split('/').slice(0, -1);
      for (let i = 0; i <= parts.length; i++) {
        const dir = [ARCHIVE_ROOT, ...parts.slice(0, i)].join('/');
        if (directories.has(dir)) continue;
        directories.add(dir);
        tar.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime: now });
      }
      await new Promise<void>((resolve, reject) => {
        tar.entry({ name: `${ARCHIVE_ROOT}/${path}`, mode: 0o644, mtime: now }, Buffer.from(content), (error) => (error ? reject(error) : resolve()));
      });
    }
    tar.finalize();
  })();
  await mkdir(dirname(archivePath), { recursive: true });
  await Promise.all([feed, pipeline(tar as unknown as Readable, createGzip(), createWriteStream(archivePath))]);
}
