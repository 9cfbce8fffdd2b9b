import { closeSync, existsSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import type { Clock } from '../clock.js';
import { writeAll, type LogSink } from './sinks.js';

export interface RotatingFileOptions {
  path: string;
  /** Rotate when the next write would take the file past this many bytes. */
  maxSizeBytes: number;
  /** Delete backups last written more than this many days ago; 0 keeps them regardless of age. */
  maxAgeDays: number;
  /** Keep at most this many backups, the newest; 0 keeps them all. */
  maxBackups: number;
  clock: Clock;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const BACKUP_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}$/;

/**
 * A log file that rotates by size, lumberjack style: the full file is renamed to
 * `<name>-<UTC timestamp><ext>` beside it (`mesh-2026-11-22T06-43-26.123.log`), writing goes on in
 * a fresh file, and old backups are pruned by count and by age. An entry larger than the limit
 * is still written, alone in a fresh file, rather than lost.
 */
export function newRotatingFile(options: RotatingFileOptions): LogSink {
  const { path, maxSizeBytes, clock } = options;
  const dir = dirname(path);
  const ext = extname(path);
  const prefix = `${basename(path, ext)}-`;
  let fd: number | undefined;
  let size = 0;
  let closed = false;

  const open = (): number => {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    const handle = openSync(path, 'a', 0o644);
    size = statSync(path).size;
    return handle;
  };

  const rotate = (): void => {
    if (fd !== undefined) closeSync(fd);
    fd = undefined;
    if (existsSync(path)) renameSync(path, freeBackupName());
    fd = open();
    prune();
  };

  const freeBackupName = (): string => {
    // Two rotations within one millisecond would share a name; step the stamp forward instead.
    for (let at = clock.now(); ; at += 1) {
      const candidate = join(dir, `${prefix}${backupTimestamp(at)}${ext}`);
      if (!existsSync(candidate)) return candidate;
    }
  };

  const prune = (): void => {
    if (options.maxBackups === 0 && options.maxAgeDays === 0) return;
    const backups = listBackups(dir, prefix, ext);
    const doomed = new Set<string>();
    if (options.maxBackups > 0) {
      for (const backup of backups.slice(options.maxBackups)) doomed.add(backup.path);
    }
    if (options.maxAgeDays > 0) {
      const cutoff = clock.now() - options.maxAgeDays * DAY_MS;
      for (const backup of backups) if (backup.mtimeMs < cutoff) doomed.add(backup.path);
    }
    for (const file of doomed) rmSync(file, { force: true });
  };

  fd = open();
  prune();

  return {
    name: path,
    kind: 'file',
    write: (text) => {
      if (closed) return;
      const length = Buffer.byteLength(text, 'utf8');
      fd ??= open();
      if (size > 0 && size + length > maxSizeBytes) rotate();
      if (fd === undefined) return;
      writeAll(fd, text);
      size += length;
    },
    close: () => {
      closed = true;
      if (fd === undefined) return;
      const handle = fd;
      fd = undefined;
      closeSync(handle);
    },
  };
}

interface Backup {
  path: string;
  stamp: string;
  mtimeMs: number;
}

/** Backups of the file, newest first by the timestamp in their name. */
function listBackups(dir: string, prefix: string, ext: string): Backup[] {
  const backups: Backup[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(ext)) continue;
    const stamp = name.slice(prefix.length, name.length - ext.length);
    if (!BACKUP_TIME.test(stamp)) continue;
    const path = join(dir, name);
    const info = statSync(path, { throwIfNoEntry: false });
    if (!info?.isFile()) continue;
    backups.push({ path, stamp, mtimeMs: info.mtimeMs });
  }
  return backups.sort((a, b) => (a.stamp < b.stamp ? 1 : a.stamp > b.stamp ? -1 : 0));
}

/** `2026-11-22T06-43-26.123`: the reference's backup stamp, in UTC, safe in file names. */
export function backupTimestamp(timeMs: number): string {
  return new Date(timeMs).toISOString().slice(0, 23).replace(/:/g, '-');
}
