import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { buildOperatorConfig, chartReleasesOf, installedStateName, listProfiles } from '../../install/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { CHARTS_DIR, helm, withCrdsNamedOnly } from '../../testing/helm.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import { TOOLS_BIN, toolsFirstOnPath } from '../../testing/tools.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl's profile and manifest commands, run in process (one smoke test spawns the built
// program) with the real helm rendering the charts: the dumps of every profile and the manifests
// they generate are pinned by golden files, and the manifests equal `helm template` of the same
// values, object for object.
const GOLDEN = 'cli/testdata/meshctl-install';
const MANIFESTS = join(PROJECT_ROOT, 'deploy');
const PROFILES = listProfiles(MANIFESTS);
let dir: string;
let restorePath: () => void;
const env = { HOME: '/nonexistent', PATH: `${TOOLS_BIN}:${process.env['PATH'] ?? ''}` };

beforeAll(async () => {
  restorePath = await toolsFirstOnPath();
  dir = mkdtempSync(join(tmpdir(), 'meshctl-install-'));
});

afterAll(() => {
  restorePath();
  rmSync(dir, { recursive: true, force: true });
});

const meshctl = (...args: string[]) => runMeshctlInProcess(args, env);
type KubeObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };
const objectsOf = (text: string): KubeObject[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject)
    .filter((o) => o !== null);

describe('meshctl profile', () => {
  test('list names every shipped profile (the built program)', async () => {
    const result = await runBin('meshctl', ['profile', 'list'], { env, timeoutMs: 30_000 });
    expect(result.stdout).toBe(`Mesh configuration profiles:\n${PROFILES.map((p) => `    ${p}\n`).join('')}`);
    expect(PROFILES).toEqual(['default', 'demo', 'empty', 'minimal', 'preview', 'remote']);
  });

  test.each(PROFILES)('dump %s (golden)', async (profile) => {
    const result = await meshctl('profile', 'dump', profile);
    expect(result.stderr).toBe('');
    expectGoldenText(join(GOLDEN, `profile-${profile}.golden.yaml`), result.stdout);
  });

  test('dump as JSON and as flags, and one part with --config-path', async () => {
    const yaml = parse((await meshctl('profile', 'dump', 'demo')).stdout) as unknown;
    expect(JSON.parse((await meshctl('profile', 'dump', 'demo', '-o', 'json')).stdout)).toEqual(yaml);
    const flags = (await meshctl('profile', 'dump', 'demo', '-o', 'flags')).stdout;
    expect(flags).toContain('--set meshConfig.accessLogFile=/dev/stdout\n');
    expect(flags).toContain('--set components.egressGateways[0].enabled=true\n');
    expect((await meshctl('profile', 'dump', '-p', 'components.pilot')).stdout).toBe('enabled: true\n');
  });

  test('diff of two profiles, and of a profile with itself', async () => {
    const diff = await meshctl('profile', 'diff', 'default', 'minimal');
    expect(diff.stdout).toMatch(/^The difference between profiles:\n/);
    expect(diff.stdout).toContain('-        enabled: true\n+        enabled: false\n');
    expect((await meshctl('profile', 'diff', 'demo', 'demo')).stdout).toBe('Profiles are identical\n');
  });
});

describe('meshctl manifest generate', () => {
  test.each(PROFILES)('for the %s profile (golden), CRDs first', async (profile) => {
    const result = await meshctl('manifest', 'generate', '--set', `profile=${profile}`);
    expect(result.stderr).toBe('');
    // The CRDs are pinned by crds/generated (the base chart's copy is checked against it): named here only.
    expectGoldenText(join(GOLDEN, `manifest-${profile}.golden.yaml`), withCrdsNamedOnly(result.stdout));
    const kinds = objectsOf(result.stdout).map((o) => o.kind);
    if (kinds.includes('CustomResourceDefinition'))
      expect(kinds.slice(0, kinds.lastIndexOf('CustomResourceDefinition') + 1).every((k) => k === 'CustomResourceDefinition')).toBe(true);
  });

  test('equals helm template of the same values, object for object', async () => {
    const generated = objectsOf(
      (await meshctl('manifest', 'generate', '--set', 'profile=demo', '--set', 'values.global.hub=registry.example.com/mesh', '-r', 'canary')).stdout,
    );
    const config = buildOperatorConfig({
      manifestsDir: MANIFESTS,
      files: [],
      sets: ['profile=demo', 'values.global.hub=registry.example.com/mesh'],
      revision: 'canary',
    });
    const expected: KubeObject[] = [];
    for (const release of chartReleasesOf(config.spec ?? {}, installedStateName('canary'))) {
      const values = join(dir, `${release.release}.values.yaml`);
      writeFileSync(values, JSON.stringify(release.values));
      const rendered = await helm(
        [
          'template',
          release.release,
          join(CHARTS_DIR, release.chart),
          '--namespace',
          release.namespace,
          '-f',
          values,
          ...(release.chart === 'base' ? ['--include-crds'] : []),
        ],
        { workDir: dir },
      );
      expected.push(...objectsOf(rendered.stdout));
    }
    expect(generated).toEqual(expected);
    expect(generated.find((o) => o.kind === 'Deployment' && o.metadata.name === 'meshd-canary')).toBeDefined();
  });

  test('-o writes one folder per component; --component keeps only those', async () => {
    const out = join(dir, 'out');
    expect((await meshctl('manifest', 'generate', '-o', out)).code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['Base', 'IngressGateways', 'Pilot']);
    expect(readdirSync(join(out, 'IngressGateways'))).toEqual(['mesh-ingressgateway.yaml']);
    const pilotOnly = objectsOf((await meshctl('manifest', 'generate', '--component', 'Pilot')).stdout);
    expect(pilotOnly.some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
    expect(pilotOnly.some((o) => o.kind === 'Deployment' && o.metadata.name === 'meshd')).toBe(true);
    expect(readFileSync(join(out, 'Pilot', 'meshd.yaml'), 'utf8')).toContain('name: meshd');
  });

  test.each([
    [['--set', 'profile=bogus'], 'Error: unknown profile "bogus": have default, demo, empty, minimal, preview, remote'],
    [['--set', 'values.global.bogus=1'], 'spec.values.global: Unrecognized key: "bogus"'],
    [['--set', 'values.pilot.replicaCount=-1'], 'spec.values.pilot.replicaCount'],
    [['--component', 'Nope'], '--component Nope: unknown component; have Base, Pilot, IngressGateways, EgressGateways'],
  ])('bad input %s is a usage error (exit 64) naming it; nothing is rendered', async (args, message) => {
    const result = await meshctl('manifest', 'generate', ...args);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(message);
  });

  test('--force proceeds past validation errors with a warning for each; the invalid values are left out', async () => {
    const forced = await meshctl('manifest', 'generate', '--force', '--set', 'values.global.bogus=1', '--set', 'values.pilot.replicaCount=-1');
    expect(forced.code).toBe(0);
    expect(forced.stderr).toBe(
      [
        'spec invalid; continuing because of --force: spec.values.global: Unrecognized key: "bogus"',
        'spec invalid; continuing because of --force: spec.values.pilot.replicaCount: Too small: expected number to be >=0',
        '',
      ].join('\n'),
    );
    const plain = await meshctl('manifest', 'generate');
    expect(forced.stdout).toBe(plain.stdout);
  });

  test('--dry-run with -o names the files it would write and writes none', async () => {
    const out = join(dir, 'dry');
    const result = await meshctl('manifest', 'generate', '--dry-run', '-o', out, '--component', 'Pilot');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`would write ${join(out, 'Pilot', 'meshd.yaml')}\n`);
    expect(existsSync(out)).toBe(false);
    // The manifest group's --dry-run (seed 3) does the same.
    expect((await meshctl('manifest', '--dry-run', 'generate', '-o', out, '--component', 'Pilot')).stdout).toBe(result.stdout);
    expect(existsSync(out)).toBe(false);
  });

  test('a malformed overlay file is a usage error naming the file', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'spec: [unclosed\n');
    const result = await meshctl('manifest', 'generate', '-f', file);
    expect(result.code).toBe(64);
    expect(result.stderr).toContain(`-f ${file}: not YAML`);
  });
});

describe('meshctl manifest diff', () => {
  let defaults: string;
  let changed: string;
  beforeAll(async () => {
    defaults = join(dir, 'diff-default.yaml');
    changed = join(dir, 'diff-changed.yaml');
    writeFileSync(defaults, (await meshctl('manifest', 'generate')).stdout);
    writeFileSync(
      changed,
      (
        await meshctl(
          'manifest',
          'generate',
          '--set',
          'values.pilot.env.PILOT_DEBOUNCE_AFTER=200ms',
          '--set',
          'components.ingressGateways[0].enabled=false',
          '--set',
          'meshConfig.accessLogFile=/dev/stdout',
        )
      ).stdout,
    );
  }, 60_000);

  test('identical manifests, exit 0', async () => {
    const result = await meshctl('manifest', 'diff', defaults, defaults);
    expect(result).toMatchObject({ code: 0, stdout: 'Manifests are identical\n', stderr: '' });
  });

  test('objects missing on one side and changed paths as OLD -> NEW (mesh config compared as YAML), exit 1 (golden)', async () => {
    const result = await meshctl('manifest', 'diff', defaults, changed);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    expectGoldenText(join(GOLDEN, 'manifest-diff.golden.txt'), result.stdout);
    expect(result.stdout).toContain('Object Deployment:mesh-system:mesh-ingressgateway is missing in B:');
    expect(result.stdout).toContain(
      'Object Deployment:mesh-system:meshd has diffs:\n\nspec:\n  template:\n    spec:\n      containers:\n        "[#0]":\n          env:\n',
    );
    expect(result.stdout).toContain('-> {"name":"PILOT_DEBOUNCE_AFTER","value":"200ms"}');
  });

  test('--select, --ignore (a kind, or a path inside an object) and --rename narrow what is compared', async () => {
    const selected = await meshctl('manifest', 'diff', defaults, changed, '--select', 'Deployment:*:meshd');
    expect(selected.code).toBe(1);
    expect(selected.stdout).toMatch(
      /^Differences in manifests are:\n\n\nObject Deployment:mesh-system:meshd has diffs:\n\nspec:\n[^]*PILOT_DEBOUNCE_AFTER[^]*\n\n$/,
    );
    expect(selected.stdout).not.toContain('Object ConfigMap');
    const ignored = await meshctl(
      'manifest',
      'diff',
      defaults,
      changed,
      '--select',
      'Deployment:*:meshd',
      '--ignore',
      'Deployment:*:meshd:spec.template.spec.containers*',
    );
    expect(ignored).toMatchObject({ code: 0, stdout: 'Manifests are identical\n' });
    const renamed = await meshctl('manifest', 'diff', defaults, defaults, '--select', 'Deployment::', '--rename', 'Deployment:*:meshd->Deployment:*:meshd-old');
    expect(renamed.stdout).toContain('Object Deployment:mesh-system:meshd is missing in A:');
    expect(renamed.stdout).toContain('Object Deployment:mesh-system:meshd-old is missing in B:');
  });

  test('-r compares folders (as manifest generate -o writes them); --verbose prints a line diff', async () => {
    expect((await meshctl('manifest', 'generate', '-o', join(dir, 'diff-a'))).code).toBe(0);
    expect((await meshctl('manifest', 'generate', '-o', join(dir, 'diff-b'), '--set', 'values.pilot.env.PILOT_DEBOUNCE_AFTER=200ms')).code).toBe(0);
    const result = await meshctl('manifest', 'diff', '-r', join(dir, 'diff-a'), join(dir, 'diff-b'), '--select', 'Deployment:*:meshd', '--verbose');
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('Object Deployment:mesh-system:meshd has diffs:\n\n@@ ');
    expect(result.stdout).toMatch(/\n\+ +- name: PILOT_DEBOUNCE_AFTER\n\+ +value: 200ms\n/);
    const missing = await meshctl('manifest', 'diff', join(dir, 'no-such-file.yaml'), defaults);
    expect(missing.code).toBe(64);
    expect(missing.stderr).toContain('could not read');
  });
});
