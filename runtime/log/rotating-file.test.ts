import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FakeClock } from '../testing/fake-clock.js';
import { newLogging } from './logging.js';
import { backupTimestamp, newRotatingFile } from './rotating-file.js';

const AT = Date.UTC(2026, 10, 22, 6, 43, 26, 123);
const DAY_MS = 24 * 60 * 60 * 1000;

let root: string;
let count = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'mesh-log-rotate-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = join(root, `case-${count++}`);
  return dir;
}

function backupsIn(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name !== 'mesh.log')
    .sort();
}

/** A 50-byte line numbered `i`. */
function line(i: number): string {
  return `entry ${String(i).padStart(3, '0')} `.padEnd(49, '.') + '\n';
}

describe('newRotatingFile', () => {
  test('rotates before a write would pass the size, keeping every entry exactly once', () => {
    const dir = freshDir();
    const clock = new FakeClock(AT);
    const file = newRotatingFile({ path: join(dir, 'mesh.log'), maxSizeBytes: 120, maxAgeDays: 0, maxBackups: 0, clock });
    for (let i = 0; i < 7; i++) {
      file.write(line(i));
      clock.advance(1000);
    }
    file.close();
    // 50-byte lines, 120 bytes allowed: two per file.
    const backups = backupsIn(dir);
    expect(backups).toEqual([`mesh-${backupTimestamp(AT + 2000)}.log`, `mesh-${backupTimestamp(AT + 4000)}.log`, `mesh-${backupTimestamp(AT + 6000)}.log`]);
    expect(backups[0]).toBe('mesh-2026-11-22T06-43-28.123.log');
    for (const name of backups) expect(statSync(join(dir, name)).size).toBe(100);
    const all = [...backups, 'mesh.log'].map((name) => readFileSync(join(dir, name), 'utf8')).join('');
    expect(all).toBe([0, 1, 2, 3, 4, 5, 6].map(line).join(''));
  });

  test('rotations within one millisecond get distinct names', () => {
    const dir = freshDir();
    const file = newRotatingFile({ path: join(dir, 'mesh.log'), maxSizeBytes: 60, maxAgeDays: 0, maxBackups: 0, clock: new FakeClock(AT) });
    for (let i = 0; i < 4; i++) file.write(line(i));
    file.close();
    expect(backupsIn(dir)).toEqual(['mesh-2026-11-22T06-43-26.123.log', 'mesh-2026-11-22T06-43-26.124.log', 'mesh-2026-11-22T06-43-26.125.log']);
  });

  test('keeps only the newest max-backups backups', () => {
    const dir = freshDir();
    const clock = new FakeClock(AT);
    const file = newRotatingFile({ path: join(dir, 'mesh.log'), maxSizeBytes: 60, maxAgeDays: 0, maxBackups: 2, clock });
    for (let i = 0; i < 6; i++) {
      file.write(line(i));
      clock.advance(1000);
    }
    file.close();
    expect(backupsIn(dir)).toEqual([`mesh-${backupTimestamp(AT + 4000)}.log`, `mesh-${backupTimestamp(AT + 5000)}.log`]);
    expect(readFileSync(join(dir, `mesh-${backupTimestamp(AT + 5000)}.log`), 'utf8')).toBe(line(4));
    expect(readFileSync(join(dir, 'mesh.log'), 'utf8')).toBe(line(5));
  });

  test('deletes backups older than max age on open and on rotation, and nothing else', () => {
    const dir = freshDir();
    const clock = new FakeClock(AT);
    const path = join(dir, 'mesh.log');
    newRotatingFile({ path, maxSizeBytes: 1000, maxAgeDays: 0, maxBackups: 0, clock }).close();
    const old = join(dir, 'mesh-2026-10-01T00-00-00.000.log');
    const recent = join(dir, 'mesh-2026-11-20T00-00-00.000.log');
    const other = join(dir, 'other-2026-10-01T00-00-00.000.log');
    const notBackup = join(dir, 'mesh-notes.log');
    for (const [file, ageDays] of [
      [old, 31],
      [recent, 29],
      [other, 90],
      [notBackup, 90],
    ] as const) {
      writeFileSync(file, 'x\n');
      const mtime = new Date(AT - ageDays * DAY_MS);
      utimesSync(file, mtime, mtime);
    }
    const file = newRotatingFile({ path, maxSizeBytes: 60, maxAgeDays: 30, maxBackups: 0, clock });
    expect(readdirSync(dir).sort()).toEqual(['mesh-2026-11-20T00-00-00.000.log', 'mesh-notes.log', 'mesh.log', 'other-2026-10-01T00-00-00.000.log']);

    // The recent backup ages past the limit; the next rotation prunes it.
    clock.advance(2 * DAY_MS);
    file.write(line(0));
    file.write(line(1));
    file.close();
    expect(backupsIn(dir)).toEqual([`mesh-${backupTimestamp(AT + 2 * DAY_MS)}.log`, 'mesh-notes.log', 'other-2026-10-01T00-00-00.000.log']);
  });

  test('an existing file is appended to, or rotated first when the next entry would not fit', () => {
    const dir = freshDir();
    const path = join(dir, 'mesh.log');
    const clock = new FakeClock(AT);
    newRotatingFile({ path, maxSizeBytes: 1000, maxAgeDays: 0, maxBackups: 0, clock }).close();
    writeFileSync(path, line(0));
    const appending = newRotatingFile({ path, maxSizeBytes: 120, maxAgeDays: 0, maxBackups: 0, clock });
    appending.write(line(1));
    appending.close();
    expect(readFileSync(path, 'utf8')).toBe(line(0) + line(1));
    expect(backupsIn(dir)).toEqual([]);

    const rotating = newRotatingFile({ path, maxSizeBytes: 120, maxAgeDays: 0, maxBackups: 0, clock });
    rotating.write(line(2));
    rotating.close();
    expect(readFileSync(path, 'utf8')).toBe(line(2));
    expect(readFileSync(join(dir, `mesh-${backupTimestamp(AT)}.log`), 'utf8')).toBe(line(0) + line(1));
  });

  test('an entry larger than the limit is written alone rather than lost', () => {
    const dir = freshDir();
    const path = join(dir, 'mesh.log');
    const clock = new FakeClock(AT);
    const file = newRotatingFile({ path, maxSizeBytes: 60, maxAgeDays: 0, maxBackups: 0, clock });
    file.write(line(0));
    clock.advance(1);
    file.write(line(1) + line(2));
    file.close();
    expect(readFileSync(path, 'utf8')).toBe(line(1) + line(2));
    expect(backupsIn(dir)).toHaveLength(1);
  });

  test('files without an extension rotate to <name>-<timestamp>', () => {
    const dir = freshDir();
    const file = newRotatingFile({ path: join(dir, 'meshlog'), maxSizeBytes: 60, maxAgeDays: 0, maxBackups: 0, clock: new FakeClock(AT) });
    file.write(line(0));
    file.write(line(1));
    file.close();
    expect(readdirSync(dir).sort()).toEqual(['meshlog', 'meshlog-2026-11-22T06-43-26.123']);
  });
});

describe('--log_rotate through newLogging', () => {
  test('entries go to the rotating file besides the targets, and it rotates by size', async () => {
    const dir = freshDir();
    const clock = new FakeClock(AT);
    let stdout = '';
    const logging = newLogging({ rotatePath: join(dir, 'mesh.log'), rotateMaxBackups: 1 }, [], {
      clock,
      stdout: { write: (text: string) => (stdout += text) },
      rotateMaxSizeBytes: 200,
    });
    const log = logging.scope('default');
    for (let i = 0; i < 10; i++) {
      log.info({ i }, 'rotating entry');
      clock.advance(1000);
    }
    await logging.close();
    // Each console line is 52 bytes: three fit in 200, so entry 9 starts the fourth file.
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(10);
    const backups = backupsIn(dir);
    expect(backups).toEqual([`mesh-${backupTimestamp(AT + 9000)}.log`]);
    expect(
      readFileSync(join(dir, backups[0] ?? ''), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t').pop()),
    ).toEqual(['i=6', 'i=7', 'i=8']);
    expect(readFileSync(join(dir, 'mesh.log'), 'utf8')).toBe('2026-11-22T06:43:35.123000Z\tinfo\trotating entry\ti=9\n');
  });

  test('megabytes by default: nothing rotates at a few hundred bytes', async () => {
    const dir = freshDir();
    const logging = newLogging({ rotatePath: join(dir, 'mesh.log'), targets: [] }, [], { clock: new FakeClock(AT) });
    for (let i = 0; i < 20; i++) logging.scope('default').info({ i }, 'entry');
    await logging.close();
    expect(readdirSync(dir)).toEqual(['mesh.log']);
  });
});
