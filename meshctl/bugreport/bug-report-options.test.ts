import { describe, expect, it, test } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { parseBugReportFile, resolveBugReportOptions, type BugReportSettings } from './bug-report-options.js';
import { filterLog } from './log-window.js';
import { renderReportLog } from './report-log.js';
import { globMatches, newSelection, parseSelectionSpec, parseSelectionSpecs, podViewOf } from './selection.js';

const NOW = new Date('2024-05-01T12:00:00Z');
const DEFAULTS: BugReportSettings = {
  'critical-errs': [],
  'ignore-errs': [],
  dir: '',
  'dry-run': false,
  duration: 0,
  'start-time': '',
  'end-time': '',
  exclude: ['orch-system'],
  include: [],
  'full-secrets': false,
  'mesh-namespace': 'mesh-system',
  timeout: 1_800_000,
};

describe('bug-report settings', () => {
  test('--duration counts back from --end-time (default now); --start-time is taken as given', () => {
    expect(resolveBugReportOptions({ ...DEFAULTS, duration: 3_600_000 }, NOW)).toMatchObject({ since: new Date('2024-05-01T11:00:00Z'), until: NOW });
    expect(resolveBugReportOptions({ ...DEFAULTS, duration: 60_000, 'end-time': '2024-04-01T00:00:00+02:00' }, NOW)).toMatchObject({
      since: new Date('2024-03-31T21:59:00Z'),
      until: new Date('2024-03-31T22:00:00Z'),
    });
    expect(resolveBugReportOptions({ ...DEFAULTS, 'start-time': '2024-05-01T10:00:00Z' }, NOW).since).toEqual(new Date('2024-05-01T10:00:00Z'));
    expect(resolveBugReportOptions(DEFAULTS, NOW).since).toBeUndefined();
  });

  it.each([
    [{ duration: 1000, 'start-time': '2024-05-01T10:00:00Z' }, /--duration and --start-time cannot be used together/],
    [{ 'start-time': 'yesterday' }, /^--start-time: expected an RFC 3339 time/],
    [{ 'end-time': '2024-05-01' }, /^--end-time: expected an RFC 3339 time/],
    [{ 'start-time': '2024-05-02T00:00:00Z' }, /^--start-time 2024-05-02T00:00:00.000Z is after --end-time/],
    [{ timeout: 0 }, /^--timeout must be positive/],
    [{ include: ['a/b/c/nolabel'] }, /^--include "a\/b\/c\/nolabel": label "nolabel" must read key=value/],
  ])('%j is a usage error (exit 64) naming the flag', (change, message) => {
    expect(() => resolveBugReportOptions({ ...DEFAULTS, ...change }, NOW)).toThrow(
      expect.objectContaining({ exitCode: 64, message: expect.stringMatching(message) }),
    );
  });

  test('the -f file: keys are the flag names, values typed; anything else is refused naming --filename', () => {
    expect(
      parseBugReportFile('include: [foo, bar]\ntimeout: 5m\nfull-secrets: true\ncritical-errs: "*panic*"\nend-time: 2024-05-01T12:00:00Z\n', 'f.yaml'),
    ).toEqual({
      include: ['foo', 'bar'],
      timeout: 300_000,
      'full-secrets': true,
      'critical-errs': ['*panic*'],
      'end-time': '2024-05-01T12:00:00Z',
    });
    expect(() => parseBugReportFile('namespace: foo\n', 'f.yaml')).toThrow(/^--filename f\.yaml: "namespace" is not a bug-report setting/);
    expect(() => parseBugReportFile('dry-run: yes please\n', 'f.yaml')).toThrow(/^--filename f\.yaml: "dry-run" must be true or false/);
    expect(() => parseBugReportFile('- a\n', 'f.yaml')).toThrow(/expected a map/);
  });
});

describe('selection specs', () => {
  const pod = (namespace: string, name: string, extra: { labels?: Record<string, string>; owner?: string; hash?: string } = {}): V1Pod => ({
    metadata: {
      namespace,
      name,
      labels: { ...extra.labels, ...(extra.hash ? { 'pod-template-hash': extra.hash } : {}) },
      ...(extra.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: extra.owner, uid: 'u' }] } : {}),
    },
    spec: { containers: [{ name: 'app' }, { name: 'mesh-proxy' }] },
  });

  test('fields: namespaces/deployments/pods/labels/annotations/containers, comma lists', () => {
    expect(parseSelectionSpec('--include', 'ns1,ns2/d1/p*/app=web,tier=*//mesh-proxy')).toMatchObject({
      namespaces: ['ns1', 'ns2'],
      deployments: ['d1'],
      pods: ['p*'],
      labels: { app: 'web', tier: '*' },
      annotations: {},
      containers: ['mesh-proxy'],
    });
  });

  it.each([
    ['*', 'anything', true],
    ['foo-*', 'foo-bar', true],
    ['foo-*', 'xfoo-bar', false],
    ['f?o', 'foo', true],
    ['a.b', 'aXb', false],
  ])('glob %s against %s: %s', (glob, text, matches) => {
    expect(globMatches(glob, text)).toBe(matches);
  });

  test('namespaces: excluded by namespace-only specs, included by any spec naming them; the mesh namespace always', () => {
    const selection = newSelection(
      parseSelectionSpecs('--include', ['foo*', 'bar/web']),
      parseSelectionSpecs('--exclude', ['foo-old', 'bar//p1', 'mesh-*']),
      'mesh-system',
    );
    expect(['foo', 'foo-old', 'foo-new', 'bar', 'baz', 'mesh-system'].filter((ns) => selection.namespace(ns))).toEqual([
      'foo',
      'foo-new',
      'bar',
      'mesh-system',
    ]);
  });

  test('pods: an include spec must match them all through; any exclude spec matching drops them', () => {
    const selection = newSelection(
      parseSelectionSpecs('--include', ['foo', 'bar/web//app=web']),
      parseSelectionSpecs('--exclude', ['foo//*-canary']),
      'mesh-system',
    );
    const picked = [
      pod('foo', 'a'),
      pod('foo', 'a-canary'),
      pod('bar', 'web-1', { labels: { app: 'web' }, owner: 'web-5d8f7c9b4', hash: '5d8f7c9b4' }),
      pod('bar', 'web-2', { labels: { app: 'other' }, owner: 'web-5d8f7c9b4', hash: '5d8f7c9b4' }),
      pod('bar', 'lone', { labels: { app: 'web' } }),
      pod('mesh-system', 'gateway'),
    ].filter((p) => selection.pod(podViewOf(p)));
    expect(picked.map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`)).toEqual(['foo/a', 'bar/web-1']);
  });
});

describe('log window and critical errors', () => {
  const raw = [
    '2024-05-01T11:59:00.000000000Z info starting',
    '2024-05-01T11:59:30.000000000Z error connection refused to upstream',
    '2024-05-01T11:59:40.000000000Z error connection refused to metrics (expected)',
    '2024-05-01T12:00:30.000000000Z error connection refused after the end',
    '',
  ].join('\n');

  test('lines after the end are dropped; critical lines counted unless an ignore glob matches', () => {
    const log = filterLog(raw, { until: NOW, criticalErrs: ['connection refused'], ignoreErrs: ['*(expected)*'] });
    expect(log.lines).toBe(3);
    expect(log.text).not.toContain('after the end');
    expect(log).toMatchObject({ criticalErrors: 1, samples: ['error connection refused to upstream'] });
    expect(filterLog(raw, { until: NOW, criticalErrs: [], ignoreErrs: [] }).criticalErrors).toBe(0);
  });

  test('bug-report.log lists the pods with critical errors first, most first', () => {
    const text = renderReportLog(
      [
        { pod: 'a/one', folder: 'proxies/a/one', count: 0, samples: [] },
        { pod: 'b/two', folder: 'proxies/b/two', count: 2, samples: ['x'] },
        { pod: 'c/three', folder: 'proxies/c/three', count: 5, samples: ['y'] },
      ],
      ['*x*'],
      ['t0 started'],
    );
    expect(text).toBe(
      'Critical errors (*x*): 2 pods\n  c/three: 5 critical error lines (proxies/c/three)\n    y\n  b/two: 2 critical error lines (proxies/b/two)\n    x\nOther pods gathered: a/one\n\nGathering log:\nt0 started\n',
    );
  });
});
