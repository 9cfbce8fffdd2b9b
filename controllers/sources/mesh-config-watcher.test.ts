import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../testing/wait-for.js';
import { type MeshConfigError } from '../../crds/mesh-config/mesh-config.js';
import type { MeshConfig } from '../../crds/mesh-config/mesh-config-schema.js';
import { newMeshConfigWatcher, type MeshConfigWatcher, type MeshConfigWatcherOptions } from './mesh-config-watcher.js';
import { newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function newMeshFile(text?: string): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'mesh-watch-'));
  roots.push(root);
  const file = join(root, 'mesh');
  if (text !== undefined) await writeFile(file, text);
  return file;
}

interface Running {
  watcher: MeshConfigWatcher;
  seen: MeshConfig[];
  logs: LogEntry[];
  errors: MeshConfigError[];
  stop(): Promise<void>;
}

function startWatching(file: string, options: Partial<MeshConfigWatcherOptions> = {}): Running {
  const logs: LogEntry[] = [];
  const errors: MeshConfigError[] = [];
  const watcher = newMeshConfigWatcher({
    file,
    log: newRecordingLogger(logs),
    debounceMs: 10,
    pollIntervalMs: 60_000,
    onError: (error) => errors.push(error),
    ...options,
  });
  const seen: MeshConfig[] = [];
  watcher.subscribe((config) => seen.push(config));
  const controller = new AbortController();
  const running = watcher.start(controller.signal);
  return {
    watcher,
    seen,
    logs,
    errors,
    async stop() {
      controller.abort();
      await running;
    },
  };
}

describe('mesh config watcher', () => {
  test('an invalid file fails at construction with the file and line', async () => {
    const file = await newMeshFile('trustDomain: a\nbogus: true\n');
    expect(() => newMeshConfigWatcher({ file, log: newNopLogger() })).toThrow(`invalid mesh config ${file}: line 2, column 1: bogus: unknown field`);
  });

  test('an edit is picked up and subscribers hear it once; a bad edit keeps the last good config', async () => {
    const file = await newMeshFile('trustDomain: one.local\n');
    const running = startWatching(file);
    try {
      const { watcher, seen, errors } = running;
      expect(watcher.current().trustDomain).toBe('one.local');

      await writeFile(file, 'trustDomain: two.local\ndefaultConfig: {proxyMetadata: {A: b}}\n');
      await waitFor(() => watcher.current().trustDomain === 'two.local', { description: 'reloaded config' });
      expect(seen.map((c) => c.trustDomain)).toEqual(['two.local']);
      expect(seen[0]?.defaultConfig.proxyMetadata).toEqual({ A: 'b' });
      expect(seen[0]?.defaultConfig.drainDuration).toBe('45s');

      await writeFile(file, 'trustDomain: three.local\ndefaultConfig:\n  proxyMetdata: {}\n');
      await waitFor(() => errors.length > 0, { description: 'rejected edit' });
      expect(errors[0]?.issues[0]).toMatchObject({ path: 'defaultConfig.proxyMetdata', line: 3, column: 3 });
      expect(watcher.current().trustDomain).toBe('two.local');
      const logged = running.logs.find((entry) => entry.level === 'error');
      expect(logged).toMatchObject({ message: 'mesh config rejected, keeping the last good one', fields: { origin: file, line: 3, column: 3 } });

      await writeFile(file, 'trustDomain: four.local\n');
      await waitFor(() => watcher.current().trustDomain === 'four.local', { description: 'fixed config' });
      expect(seen.map((c) => c.trustDomain)).toEqual(['two.local', 'four.local']);
      expect(errors).toHaveLength(1);

      // A rewrite with the same meaning is no change.
      await writeFile(file, '# same\ntrustDomain: four.local\n');
      await rm(file);
      await waitFor(() => watcher.current().trustDomain === 'cluster.local', { description: 'defaults after removal' });
      expect(seen.map((c) => c.trustDomain)).toEqual(['two.local', 'four.local', 'cluster.local']);
    } finally {
      await running.stop();
    }
  });

  test('the shared config merges underneath and can change at run time', async () => {
    const file = await newMeshFile('trustDomain: file.local\n');
    const running = startWatching(file, { sharedText: 'trustDomain: shared.local\ningressClass: shared\n' });
    try {
      const { watcher, seen, errors } = running;
      expect(watcher.current()).toMatchObject({ trustDomain: 'file.local', ingressClass: 'shared' });
      watcher.setSharedText('ingressClass: other\n');
      expect(watcher.current()).toMatchObject({ trustDomain: 'file.local', ingressClass: 'other' });
      watcher.setSharedText('ingressClass: [\n');
      expect(errors).toHaveLength(1);
      expect(errors[0]?.origin).toBe('shared mesh config');
      expect(watcher.current().ingressClass).toBe('other');
      watcher.setSharedText(undefined);
      expect(watcher.current().ingressClass).toBe('mesh');
      expect(seen.map((c) => c.ingressClass)).toEqual(['other', 'mesh']);
    } finally {
      await running.stop();
    }
  });

  test('without fs.watch, the periodic re-read picks up a file created later', async () => {
    const file = await newMeshFile();
    const clock = new FakeClock();
    const running = startWatching(file, { watch: false, clock, pollIntervalMs: 1000 });
    try {
      expect(running.watcher.current().rootNamespace).toBe('mesh-system');
      await writeFile(file, 'rootNamespace: elsewhere\n');
      clock.advance(1000);
      await waitFor(() => running.watcher.current().rootNamespace === 'elsewhere');
      expect(running.seen).toHaveLength(1);
      // An unchanged bad file is reported once, not at every poll.
      await writeFile(file, 'rootNamespace: [\n');
      clock.advance(1000);
      await waitFor(() => running.errors.length === 1);
      clock.advance(1000);
      clock.advance(1000);
      await writeFile(file, 'rootNamespace: again\n');
      clock.advance(1000);
      await waitFor(() => running.watcher.current().rootNamespace === 'again');
      expect(running.errors).toHaveLength(1);
    } finally {
      await running.stop();
    }
  });
});
