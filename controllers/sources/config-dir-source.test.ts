import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../testing/wait-for.js';
import type { ConfigFileProblem } from './config-file-problem.js';
import { newConfigDirSource, type ConfigDirSource, type ConfigDirSourceOptions } from './config-dir-source.js';
import { controllerFor, newManager, newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { KubeObject, Source } from '../../runtime/index.js';
import { newRecordingLogger, type LogEntry } from '../../testing/recording-logger.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function newFolder(files: Record<string, string> = {}): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'config-dir-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) await put(root, path, text);
  return root;
}

async function put(root: string, path: string, text: string): Promise<void> {
  const full = join(root, path);
  await mkdir(join(full, '..'), { recursive: true });
  await writeFile(full, text);
}

interface Running {
  configDir: ConfigDirSource;
  logs: LogEntry[];
  problems: ConfigFileProblem[];
  stop(): Promise<void>;
}

/** Starts the shared watcher as the manager would and waits until the first scan is stored. */
async function startWatching(dir: string, options: Partial<ConfigDirSourceOptions> = {}): Promise<Running> {
  const logs: LogEntry[] = [];
  const problems: ConfigFileProblem[] = [];
  const configDir = newConfigDirSource({
    dir,
    log: newRecordingLogger(logs),
    debounceMs: 10,
    rescanIntervalMs: 60_000,
    onProblem: (problem) => problems.push(problem),
    ...options,
  });
  const controller = new AbortController();
  const running = configDir.runnable.start(controller.signal);
  await configDir.waitForSync();
  return {
    configDir,
    logs,
    problems,
    async stop() {
      controller.abort();
      await running;
    },
  };
}

type Seen = { type: 'apply' | 'delete'; key: string; resourceVersion: string | undefined };

function record(source: Source<KubeObject>): Seen[] {
  const seen: Seen[] = [];
  source.subscribe((event) =>
    seen.push({
      type: event.type,
      key: `${event.object.metadata?.namespace ?? ''}/${event.object.metadata?.name ?? ''}`,
      resourceVersion: event.object.metadata?.resourceVersion,
    }),
  );
  return seen;
}

const NETWORKING = 'networking.mesh.io/v1alpha3';

function virtualService(name: string, host: string, namespace?: string): string {
  const ns = namespace ? `\n  namespace: ${namespace}` : '';
  return `apiVersion: ${NETWORKING}\nkind: VirtualService\nmetadata:\n  name: ${name}${ns}\nspec:\n  hosts: [${host}]\n`;
}

function namespace(name: string): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;
}

function hostsOf(object: KubeObject | undefined): unknown {
  return (object?.['spec'] as { hosts?: unknown } | undefined)?.hosts;
}

describe('config folder source', () => {
  test('loads nested folders and multi-document files, with defaults and synthetic metadata', async () => {
    const dir = await newFolder({
      'all.yaml': `${namespace('foo')}---\n${virtualService('plain', 'a.example')}`,
      'nested/deeper/gw.yml': `apiVersion: ${NETWORKING}\nkind: Gateway\nmetadata:\n  name: gw\n  namespace: foo\nspec: {}\n`,
      'nested/vs.json': JSON.stringify({ apiVersion: NETWORKING, kind: 'VirtualService', metadata: { name: 'j', namespace: 'foo' }, spec: { hosts: ['j'] } }),
      'nested/notes.txt': virtualService('ignored', 'txt'),
      '.hidden/vs.yaml': virtualService('hidden', 'h'),
    });
    const running = await startWatching(dir);
    try {
      const { configDir } = running;
      expect(configDir.isSynced()).toBe(true);
      const services = configDir.sourceFor(NETWORKING, 'VirtualService');
      expect(services.isSynced()).toBe(true);
      expect(
        services.store
          .list()
          .map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`)
          .sort(),
      ).toEqual(['default/plain', 'foo/j']);
      expect(configDir.sourceFor(NETWORKING, 'Gateway').store.get({ namespace: 'foo', name: 'gw' })).toBeDefined();

      const ns = configDir.sourceFor('v1', 'Namespace').store.get({ namespace: '', name: 'foo' });
      expect(ns?.metadata).toMatchObject({ name: 'foo', resourceVersion: expect.stringMatching(/^\d+$/), generation: 1 });
      expect(ns?.metadata).not.toHaveProperty('namespace');

      const plain = services.store.get({ namespace: 'default', name: 'plain' });
      expect(plain?.metadata?.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(plain?.metadata?.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(configDir.sourceFor(NETWORKING, 'VirtualService')).toBe(services);
      // A version of the same group is the same kind.
      expect(configDir.sourceFor('networking.mesh.io/v1beta1', 'VirtualService')).toBe(services);

      // A subscriber added after sync first sees every stored object as `apply`.
      expect(record(services).map((e) => e.type)).toEqual(['apply', 'apply']);
      expect(configDir.describeProblems()).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  test('JSON and YAML Lists serve their items', async () => {
    const dir = await newFolder({
      'list.json': JSON.stringify({
        apiVersion: 'v1',
        kind: 'List',
        items: [
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a' } },
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: 'mesh-system' }, data: { mesh: '' } },
        ],
      }),
      'maps.yaml': 'apiVersion: v1\nkind: ConfigMapList\nitems:\n  - metadata: {name: other}\n    data: {k: v}\n',
    });
    const running = await startWatching(dir);
    try {
      const maps = running.configDir.sourceFor('v1', 'ConfigMap').store;
      expect(maps.get({ namespace: 'mesh-system', name: 'mesh' })?.['data']).toEqual({ mesh: '' });
      expect(maps.get({ namespace: 'default', name: 'other' })?.kind).toBe('ConfigMap');
      expect(
        running.configDir
          .sourceFor('v1', 'Namespace')
          .store.list()
          .map((o) => o.metadata?.name),
      ).toEqual(['a']);
    } finally {
      await running.stop();
    }
  });

  test('a file added, changed, rewritten unchanged and removed gives exactly one event each', async () => {
    const dir = await newFolder({ 'keep.yaml': virtualService('keep', 'k') });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      const seen = record(services);
      seen.length = 0;
      const key = { namespace: 'default', name: 'vs' };

      await put(dir, 'sub/vs.yaml', virtualService('vs', 'one'));
      await waitFor(() => services.store.get(key), { description: 'added object' });
      const added = services.store.get(key);
      expect(seen).toEqual([{ type: 'apply', key: 'default/vs', resourceVersion: added?.metadata?.resourceVersion }]);

      await put(dir, 'sub/vs.yaml', virtualService('vs', 'two'));
      await waitFor(() => hostsOf(services.store.get(key))?.toString() === 'two', { description: 'changed object' });
      const changed = services.store.get(key);
      expect(changed?.metadata?.uid).toBe(added?.metadata?.uid);
      expect(changed?.metadata?.creationTimestamp).toBe(added?.metadata?.creationTimestamp);
      expect(changed?.metadata?.generation).toBe(2);
      expect(Number(changed?.metadata?.resourceVersion)).toBeGreaterThan(Number(added?.metadata?.resourceVersion));

      // Same content again (keys reordered too): no event. A later change to another file proves a scan ran.
      await put(dir, 'sub/vs.yaml', `spec:\n  hosts: [two]\nkind: VirtualService\napiVersion: ${NETWORKING}\nmetadata: {name: vs}\n`);
      await put(dir, 'keep.yaml', virtualService('keep', 'k2'));
      await waitFor(() => hostsOf(services.store.get({ namespace: 'default', name: 'keep' }))?.toString() === 'k2');

      await rm(join(dir, 'sub/vs.yaml'));
      await waitFor(() => services.store.get(key) === undefined, { description: 'removed object' });
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply default/vs', 'apply default/vs', 'apply default/keep', 'delete default/vs']);
      expect(seen[3]?.resourceVersion).toBe(changed?.metadata?.resourceVersion);

      // A whole folder moved away deletes its objects once too.
      await put(dir, 'moved/a.yaml', virtualService('in-folder', 'f'));
      await waitFor(() => services.store.get({ namespace: 'default', name: 'in-folder' }));
      await rename(join(dir, 'moved'), join(dir, '.moved-away'));
      await waitFor(() => services.store.get({ namespace: 'default', name: 'in-folder' }) === undefined);
      expect(seen.filter((e) => e.key === 'default/in-folder').map((e) => e.type)).toEqual(['apply', 'delete']);
    } finally {
      await running.stop();
    }
  });

  test('a document added or removed in a multi-document file touches only that object', async () => {
    const dir = await newFolder({ 'multi.yaml': `${virtualService('a', 'a')}---\n${virtualService('b', 'b')}` });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      const seen = record(services);
      seen.length = 0;
      await put(dir, 'multi.yaml', `${virtualService('a', 'a')}---\n${virtualService('b', 'b')}---\n${virtualService('c', 'c')}`);
      await waitFor(() => services.store.get({ namespace: 'default', name: 'c' }));
      await put(dir, 'multi.yaml', `${virtualService('a', 'a')}---\n${virtualService('c', 'c')}`);
      await waitFor(() => services.store.get({ namespace: 'default', name: 'b' }) === undefined);
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply default/c', 'delete default/b']);
    } finally {
      await running.stop();
    }
  });

  test('renaming a key deletes the old object and applies the new one', async () => {
    const dir = await newFolder({ 'vs.yaml': virtualService('old', 'h', 'foo') });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      const seen = record(services);
      seen.length = 0;
      await put(dir, 'vs.yaml', virtualService('old', 'h', 'bar'));
      await waitFor(() => services.store.get({ namespace: 'bar', name: 'old' }));
      expect(seen.map((e) => `${e.type} ${e.key}`).sort()).toEqual(['apply bar/old', 'delete foo/old']);
      expect(services.store.list()).toHaveLength(1);
    } finally {
      await running.stop();
    }
  });

  test('a malformed file keeps its last good objects and is reported until fixed', async () => {
    const dir = await newFolder({
      'policies.yaml': `${virtualService('a', 'a')}---\n${virtualService('b', 'b')}`,
      'other.yaml': virtualService('other', 'o'),
    });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      const seen = record(services);
      seen.length = 0;
      const path = join(dir, 'policies.yaml');

      await put(dir, 'policies.yaml', `${virtualService('a', 'changed')}---\napiVersion: v1\nkind: [broken\n`);
      await waitFor(() => running.configDir.describeProblems().length > 0, { description: 'reported problem' });
      const [problem] = running.configDir.describeProblems();
      expect(problem).toMatchObject({ path, reason: 'syntax' });
      expect(problem?.line).toBeGreaterThanOrEqual(9);
      expect(problem?.column).toBeGreaterThanOrEqual(1);
      expect(running.problems).toEqual([problem]);
      const logged = running.logs.find((entry) => entry.level === 'error');
      expect(logged?.fields).toMatchObject({ path, line: problem?.line, column: problem?.column, reason: 'syntax' });
      // The last good objects still serve, unchanged.
      expect(hostsOf(services.store.get({ namespace: 'default', name: 'a' }))).toEqual(['a']);
      expect(services.store.get({ namespace: 'default', name: 'b' })).toBeDefined();

      // Other files keep working meanwhile, and the unchanged bad file is not reported again.
      await put(dir, 'other.yaml', virtualService('other', 'o2'));
      await waitFor(() => hostsOf(services.store.get({ namespace: 'default', name: 'other' }))?.toString() === 'o2');
      expect(running.problems).toHaveLength(1);

      await put(dir, 'policies.yaml', `${virtualService('a', 'fixed')}---\n${virtualService('b', 'b')}`);
      await waitFor(() => hostsOf(services.store.get({ namespace: 'default', name: 'a' }))?.toString() === 'fixed');
      expect(running.configDir.describeProblems()).toEqual([]);
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply default/other', 'apply default/a']);
      expect(running.logs.some((entry) => entry.message === 'config file problems resolved' && entry.fields['path'] === path)).toBe(true);
    } finally {
      await running.stop();
    }
  });

  test('a bad document drops only itself and is located', async () => {
    const dir = await newFolder({ 'multi.yaml': `${virtualService('a', 'a')}---\n${virtualService('b', 'b')}` });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      await put(dir, 'multi.yaml', `${virtualService('a', 'a2')}---\napiVersion: ${NETWORKING}\nkind: VirtualService\nmetadata: {}\n`);
      await waitFor(() => services.store.get({ namespace: 'default', name: 'b' }) === undefined);
      expect(hostsOf(services.store.get({ namespace: 'default', name: 'a' }))).toEqual(['a2']);
      expect(running.configDir.describeProblems()).toEqual([
        { path: join(dir, 'multi.yaml'), line: 8, column: 1, reason: 'document', message: 'VirtualService: missing metadata.name' },
      ]);
    } finally {
      await running.stop();
    }
  });

  test('the same key in two files: the first sorted path wins, the other is reported and takes over when the first goes', async () => {
    const dir = await newFolder({
      'a/vs.yaml': virtualService('dup', 'from-a'),
      'b.yaml': `${namespace('x')}---\n${virtualService('dup', 'from-b')}`,
    });
    const running = await startWatching(dir);
    try {
      const services = running.configDir.sourceFor(NETWORKING, 'VirtualService');
      const key = { namespace: 'default', name: 'dup' };
      expect(hostsOf(services.store.get(key))).toEqual(['from-a']);
      expect(running.configDir.describeProblems()).toEqual([
        {
          path: join(dir, 'b.yaml'),
          line: 6,
          column: 1,
          reason: 'conflict',
          message: `VirtualService.networking.mesh.io default/dup is already defined in ${join(dir, 'a/vs.yaml')} at line 1; this definition is ignored`,
        },
      ]);
      const seen = record(services);
      seen.length = 0;
      await rm(join(dir, 'a'), { recursive: true });
      await waitFor(() => hostsOf(services.store.get(key))?.toString() === 'from-b');
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply default/dup']);
      expect(running.configDir.describeProblems()).toEqual([]);
    } finally {
      await running.stop();
    }
  });

  test('waitForSync: pending before start, rejects on an aborted signal, and fails when the folder is missing', async () => {
    const dir = await newFolder({ 'ns.yaml': namespace('a') });
    const configDir = newConfigDirSource({ dir, log: newNopLogger() });
    const namespaces = configDir.sourceFor('v1', 'Namespace');
    expect(namespaces.isSynced()).toBe(false);
    await expect(namespaces.waitForSync(AbortSignal.abort(new Error('gave up')))).rejects.toThrow('gave up');

    // A per-kind source started alone (as the controller builder does) runs the shared watcher.
    const stop = new AbortController();
    const running = namespaces.start(stop.signal);
    await namespaces.waitForSync();
    expect(namespaces.store.list().map((o) => o.metadata?.name)).toEqual(['a']);
    stop.abort();
    await running;
    await expect(namespaces.start(new AbortController().signal)).rejects.toThrow(/start\(\) called twice/);

    const missing = newConfigDirSource({ dir: join(dir, 'nope'), log: newNopLogger() });
    const waiting = missing.waitForSync();
    await expect(missing.runnable.start(new AbortController().signal)).rejects.toMatchObject({ code: 'config-dir-unreadable' });
    await expect(waiting).rejects.toMatchObject({ code: 'stopped-before-sync' });
  });

  test('without fs.watch, the periodic rescan picks up changes', async () => {
    const dir = await newFolder({ 'a.yaml': namespace('a') });
    const clock = new FakeClock();
    const running = await startWatching(dir, { watch: false, clock, rescanIntervalMs: 1000 });
    try {
      const namespaces = running.configDir.sourceFor('v1', 'Namespace');
      const seen = record(namespaces);
      seen.length = 0;
      await put(dir, 'b.yaml', namespace('b'));
      await rm(join(dir, 'a.yaml'));
      clock.advance(1000);
      await waitFor(() => namespaces.store.get({ namespace: '', name: 'b' }));
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply /b', 'delete /a']);
      expect(namespaces.store.get({ namespace: '', name: 'b' })?.metadata?.creationTimestamp).toBe(
        new Date(clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      );
    } finally {
      await running.stop();
    }
  });

  test('the folder vanishing keeps every object and is reported until it comes back', async () => {
    const parent = await newFolder();
    const dir = join(parent, 'config');
    await put(dir, 'a.yaml', namespace('a'));
    const clock = new FakeClock();
    const running = await startWatching(dir, { clock, rescanIntervalMs: 1000 });
    try {
      const namespaces = running.configDir.sourceFor('v1', 'Namespace');
      const seen = record(namespaces);
      seen.length = 0;
      await rename(dir, join(parent, 'away'));
      clock.advance(1000);
      await waitFor(() => running.configDir.describeProblems().length === 1);
      expect(running.configDir.describeProblems()[0]).toMatchObject({ path: dir, reason: 'read' });
      expect(namespaces.store.list()).toHaveLength(1);
      await rename(join(parent, 'away'), dir);
      clock.advance(1000);
      await waitFor(() => running.configDir.describeProblems().length === 0);
      expect(namespaces.store.list()).toHaveLength(1);
      expect(seen).toEqual([]);
      // The watch was opened again on the folder that came back: an event schedules the debounced scan.
      await put(dir, 'b.yaml', namespace('b'));
      await waitFor(() => clock.pendingTimers() === 2, { description: 'debounced scan after an event' });
      clock.advance(10);
      await waitFor(() => namespaces.store.get({ namespace: '', name: 'b' }));
    } finally {
      await running.stop();
    }
  });

  test('a file seen empty once is confirmed before its objects are deleted', async () => {
    const dir = await newFolder({ 'a.yaml': namespace('a') });
    const clock = new FakeClock();
    const running = await startWatching(dir, { watch: false, clock, rescanIntervalMs: 1000, debounceMs: 10 });
    try {
      const namespaces = running.configDir.sourceFor('v1', 'Namespace');
      const seen = record(namespaces);
      seen.length = 0;
      // Truncated, then written before the second look: no event but the change itself.
      await put(dir, 'a.yaml', '');
      clock.advance(1000);
      await waitFor(() => clock.pendingTimers() === 2, { description: 'follow-up scan scheduled' });
      expect(namespaces.store.get({ namespace: '', name: 'a' })).toBeDefined();
      await put(dir, 'a.yaml', namespace('a').replace('name: a', 'name: a\n  labels: {x: y}'));
      clock.advance(10);
      await waitFor(() => namespaces.store.get({ namespace: '', name: 'a' })?.metadata?.labels);
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply /a']);

      // Empty on both looks: the objects go.
      await put(dir, 'a.yaml', '');
      clock.advance(1000);
      await waitFor(() => clock.pendingTimers() === 2, { description: 'follow-up scan scheduled' });
      expect(namespaces.store.list()).toHaveLength(1);
      clock.advance(10);
      await waitFor(() => namespaces.store.list().length === 0);
      expect(seen.map((e) => `${e.type} ${e.key}`)).toEqual(['apply /a', 'delete /a']);
    } finally {
      await running.stop();
    }
  });

  test('feeds a controller through the manager like any other source', async () => {
    const dir = await newFolder({ 'vs.yaml': virtualService('one', 'h', 'foo') });
    const configDir = newConfigDirSource({ dir, log: newNopLogger(), debounceMs: 10 });
    const manager = newManager({ log: newNopLogger(), shutdownDurationMs: 2000 });
    const reconciled: string[] = [];
    const services = configDir.sourceFor(NETWORKING, 'VirtualService');
    controllerFor(manager, 'virtual-service')
      .watches(services)
      .withLeaderElection(false)
      .complete(async ({ key }) => {
        reconciled.push(`${key.namespace}/${key.name}:${services.store.get(key) ? 'present' : 'gone'}`);
      });
    manager.add(configDir.runnable);
    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      await waitFor(() => reconciled.includes('foo/one:present'), { description: 'initial reconcile' });
      await rm(join(dir, 'vs.yaml'));
      await waitFor(() => reconciled.includes('foo/one:gone'), { description: 'reconcile after delete' });
    } finally {
      stop.abort();
      await running;
    }
  });
});
