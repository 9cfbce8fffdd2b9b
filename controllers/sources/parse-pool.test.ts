import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KIND_NAMES, apiVersionOf, completeValidation, validateResource, type ValidateOptions } from '../../crds/index.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { waitFor } from '../../testing/wait-for.js';
import { writeMixedConfigFolder } from '../testing/mixed-config-folder.js';
import { newNopLogger, type KubeObject } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { checkConfigFile, validationInputOf } from './config-file-checker.js';
import type { newConfigDirSource as NewConfigDirSource, ConfigDirSource } from './config-dir-source.js';
import type { newParsePool as NewParsePool, FileText, ParsePool } from './parse-pool.js';
import { WARM_UP_SAMPLE, warmUpParsing } from './parse-warm-up.js';

// The worker threads need the compiled worker script: the pool and the source are taken from the
// build (`npm run build`), as the daemon runs them. Uncompiled, the same pool parses on the calling thread.
async function fromBuild<T>(path: string): Promise<T> {
  return (await import(pathToFileURL(join(PROJECT_ROOT, 'dist', path)).href)) as T;
}

let newParsePool: typeof NewParsePool;
let newConfigDirSource: typeof NewConfigDirSource;
let folder: string;
let files: FileText[];

beforeAll(async () => {
  ({ newParsePool } = await fromBuild<{ newParsePool: typeof NewParsePool }>('controllers/sources/parse-pool.js'));
  ({ newConfigDirSource } = await fromBuild<{ newConfigDirSource: typeof NewConfigDirSource }>('controllers/sources/config-dir-source.js'));
  folder = await mkdtemp(join(tmpdir(), 'parse-pool-'));
  await writeMixedConfigFolder(folder, 3);
  const names = (await readdir(folder, { recursive: true })).filter((name) => /\.(ya?ml|json)$/.test(name)).sort();
  files = await Promise.all(names.map(async (name) => ({ path: join(folder, name), text: await readFile(join(folder, name), 'utf8') })));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** Order-sensitive: the same keys in the same order, the same messages byte for byte. */
function sameText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : Object.is(v, -0) ? '-0' : v));
}

describe('the parse pool', () => {
  test('on worker threads it gives exactly what parsing and checking on this thread gives, in the same order', async () => {
    const pool = newParsePool({ threads: 3, minParallelBytes: 0 });
    try {
      pool.prestart(0);
      expect(pool.threads()).toBe(2);
      const parsed = await pool.parse(files);
      const here = files.map((file) => checkConfigFile(file.path, file.text));
      expect(parsed).toEqual(here);
      expect(sameText(parsed)).toBe(sameText(here));
      // The folder has all of it: rejected and accepted policies, a broken file, other kinds.
      expect(parsed.some((file) => !file.parsed)).toBe(true);
      const checks = parsed.flatMap((file) => file.documents.flatMap((document) => (document.check ? [document.check] : [])));
      expect(checks.filter((check) => check.errors.length > 0).length).toBeGreaterThan(50);
      expect(checks.filter((check) => check.errors.length === 0).length).toBeGreaterThan(50);
      // A small batch stays on this thread, and is no reason to start threads ahead.
      const small = newParsePool({ threads: 3 });
      small.prestart(1_000);
      expect(await small.parse(files.slice(0, 3))).toEqual(here.slice(0, 3));
      expect(small.threads()).toBe(0);
    } finally {
      await pool.close();
    }
    expect(pool.threads()).toBe(0);
  });

  test('idle workers end after idleMs; the next large batch starts them again', async () => {
    const clock = new FakeClock();
    const pool = newParsePool({ threads: 3, minParallelBytes: 0, idleMs: 5_000, clock });
    try {
      await pool.parse(files);
      expect(pool.threads()).toBe(2);
      clock.advance(4_999);
      expect(pool.threads()).toBe(2);
      clock.advance(1);
      expect(pool.threads()).toBe(0);
      expect((await pool.parse(files)).length).toBe(files.length);
      expect(pool.threads()).toBe(2);
    } finally {
      await pool.close();
    }
    expect(pool.threads()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });
});

describe("the parse threads' warm-up", () => {
  test('its sample is one valid policy of every kind', () => {
    const checked = checkConfigFile('warm-up.yaml', WARM_UP_SAMPLE);
    expect(checked.problems).toEqual([]);
    expect(checked.documents.map((document) => document.object.kind).sort()).toEqual([...KIND_NAMES].sort());
    expect(checked.documents.map((document) => document.check?.errors)).toEqual(KIND_NAMES.map(() => []));
  });

  test('stops as soon as a job comes', async () => {
    let busy = false;
    let passes = 0;
    await warmUpParsing({ isBusy: () => (passes++ === 3 ? (busy = true) : busy), rounds: 1_000 });
    expect(passes).toBe(4);
    await warmUpParsing({ isBusy: () => false, rounds: 2 });
  });
});

const KINDS: readonly (readonly [string, string])[] = [
  ...KIND_NAMES.map((kind) => [apiVersionOf(kind), kind] as const),
  ['v1', 'ConfigMap'],
  ['v1', 'Service'],
];
const PORTS: ValidateOptions = { servicePortsForWorkload: () => [8080] };

async function readFolder(pool: ParsePool | undefined): Promise<{ source: ConfigDirSource; stop: () => Promise<void> }> {
  const source = newConfigDirSource({
    dir: folder,
    log: newNopLogger(),
    clock: new FakeClock(),
    watch: false,
    ...(pool ? { parsePool: pool } : { parseThreads: 1 }),
  });
  const stop = new AbortController();
  const running = source.runnable.start(stop.signal);
  await source.waitForSync();
  return {
    source,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

describe('the config folder on parse threads', () => {
  test('a folder large enough gets its threads when the source is built, before its first scan', async () => {
    const pool = newParsePool({ threads: 3, minParallelBytes: 1024 });
    const small = newParsePool({ threads: 3, minParallelBytes: 1024 * 1024 * 1024 });
    try {
      newConfigDirSource({ dir: folder, log: newNopLogger(), clock: new FakeClock(), parsePool: pool });
      newConfigDirSource({ dir: folder, log: newNopLogger(), clock: new FakeClock(), parsePool: small });
      await waitFor(() => pool.threads() === 2, { description: 'the threads of the large folder' });
      expect(small.threads()).toBe(0);
    } finally {
      await pool.close();
    }
  });

  test('serves, checks and reports exactly what it does on one thread; the threads end with it', async () => {
    const pool = newParsePool({ threads: 3, minParallelBytes: 0 });
    const threaded = await readFolder(pool);
    const single = await readFolder(undefined);
    try {
      expect(pool.threads()).toBe(2);
      expect(sameText(threaded.source.describeProblems())).toBe(sameText(single.source.describeProblems()));
      let checked = 0;
      for (const [apiVersion, kind] of KINDS) {
        const served = threaded.source.sourceFor(apiVersion, kind).store.list();
        const alone = single.source.sourceFor(apiVersion, kind).store.list();
        expect(sameText(served)).toBe(sameText(alone));
        const isMeshKind = (KIND_NAMES as readonly string[]).includes(kind);
        served.forEach((object: KubeObject, i) => {
          const check = threaded.source.checkOf(object);
          expect(sameText(check)).toBe(sameText(single.source.checkOf(alone[i] as KubeObject)));
          if (!isMeshKind) {
            expect(check).toBeUndefined();
            return;
          }
          if (!check) throw new Error(`${kind} ${object.metadata?.name}: no check`);
          // What the reconciler makes of the check is what validating the served object gives.
          expect(sameText(completeValidation(check, PORTS))).toBe(sameText(validateResource(validationInputOf(object), PORTS)));
          checked++;
        });
      }
      expect(checked).toBeGreaterThan(100);
    } finally {
      await threaded.stop();
      await single.stop();
    }
    expect(pool.threads()).toBe(0);
  });
});
