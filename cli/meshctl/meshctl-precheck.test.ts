import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { kubectl as runKubectl } from '../../testing/kubectl.js';
import { PROJECT_ROOT, runBin } from '../../testing/run-bin.js';
import { waitFor } from '../../testing/wait-for.js';
import { runMeshctlInProcess } from '../testing/run-meshctl.js';

// meshctl x precheck and x revision describe|list -v, built, against one API server double; the
// cluster's objects are applied with the real kubectl from cli/testdata/meshctl-revision.
const GOLDEN = 'cli/testdata/meshctl-revision';
let kube: ApiServerDouble;
let dir: string;

const meshctl = (...args: string[]) => runMeshctlInProcess(['-c', join(dir, 'kubeconfig'), ...args], { HOME: '/nonexistent' });
const kubectl = (...args: string[]) => runKubectl({ kubeconfig: join(dir, 'kubeconfig'), home: dir }, args);
const SUCCESS =
  '✔ No issues found when checking the cluster. Mesh is safe to install or upgrade!\n  To get started, check out the README of the mesh project, section "Installing with meshctl"\n';
const ISSUES =
  'Error: Issues found when checking the cluster. Mesh may not be safe to install or upgrade.\nSee the README of the mesh project, section "Analysis messages", for more information about causes and resolutions.\n';
/** Pod ages depend on when the test runs. */
const withoutAges = (text: string): string => text.replace(/ \d+[smhdy](\d+[smh])?\n/g, ' <age>\n');

beforeAll(async () => {
  kube = await startApiServerDouble({ bookmarkIntervalMs: 0 });
  dir = mkdtempSync(join(tmpdir(), 'meshctl-precheck-'));
  await kube.writeKubeconfig(join(dir, 'kubeconfig'));
});

afterAll(async () => {
  await kube?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('meshctl x precheck', () => {
  test('an empty cluster: no issues, the success text on stderr, exit 0', async () => {
    const result = await meshctl('x', 'precheck');
    expect(result).toEqual({ code: 0, stdout: '', stderr: SUCCESS });
  });

  test('kinds the user may not create: one MSH0141 each, sorted, and exit 1; --skip-controlplane skips the checks', async () => {
    kube.faults.denyAccess([
      { verb: 'create', group: 'apps', resource: 'deployments', namespace: 'mesh-system' },
      { verb: 'create', group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' },
    ]);
    try {
      const result = await meshctl('x', 'precheck');
      expect(result.stdout).toBe(
        'Error [MSH0141] (Cluster) Missing required permission to create resource customresourcedefinitions (permission denied)\n' +
          'Error [MSH0141] (Cluster) Missing required permission to create resource deployments (permission denied)\n',
      );
      expect(result.stderr).toBe(ISSUES);
      expect(result.code).toBe(1);
      // Another mesh namespace is not the denied one.
      expect((await meshctl('-i', 'elsewhere', 'x', 'precheck')).stdout).not.toContain('deployments');
      expect(await meshctl('x', 'precheck', '--skip-controlplane')).toEqual({ code: 0, stdout: '', stderr: SUCCESS });
    } finally {
      kube.faults.denyAccess([]);
    }
  });

  test('a cluster older than 1.17: MSH0142', async () => {
    const old = await startApiServerDouble({ bookmarkIntervalMs: 0, kubernetesVersion: '1.16.15' });
    try {
      await old.writeKubeconfig(join(dir, 'old-kubeconfig'));
      const result = await runBin('meshctl', ['-c', join(dir, 'old-kubeconfig'), 'x', 'precheck'], { env: { HOME: '/nonexistent' } });
      expect(result.stdout).toBe('Error [MSH0142] (Cluster) The Kubernetes Version "v1.16.15-mesh-double" is lower than the minimum version: 1.17\n');
      expect(result.code).toBe(1);
    } finally {
      await old.close();
    }
  });

  test('an installed revision (info, exit 0), a revision named as a tag and an unrecorded control plane (MSH1002, exit 1)', async () => {
    expect((await kubectl('apply', '-f', join(PROJECT_ROOT, 'deploy/charts/base/files/meshoperator.yaml'))).code).toBe(0);
    await waitFor(async () => (await kubectl('apply', '-f', join(GOLDEN, 'cluster.yaml'))).code === 0, {
      timeoutMs: 20_000,
      description: 'the fixtures applied',
    });
    expect(
      (
        await kubectl(
          'patch',
          'pod',
          'meshd-canary-7d9f-x1',
          '-n',
          'mesh-system',
          '--subresource=status',
          '--type=merge',
          '-p',
          '{"status":{"phase":"Running","podIP":"10.1.0.5"}}',
        )
      ).code,
    ).toBe(0);

    const installed = await meshctl('x', 'precheck', '-r', 'canary');
    expect(installed.stdout).toBe(
      'Info [MSH1001] (MeshOperator installed-state-canary.mesh-system) Mesh revision "canary" is already installed: installing it again changes this installation in place (meshctl upgrade shows the changes); to run a second control plane beside it, install with another --revision.\n',
    );
    expect(installed).toMatchObject({ code: 0, stderr: '' });

    const tag = await meshctl('x', 'precheck', '--revision', 'prod');
    expect(tag.stdout).toBe(
      'Error [MSH1002] (MutatingWebhookConfiguration mesh-revision-tag-prod) Revision "prod" is the name of an existing revision tag (of revision "canary"): the new revision\'s injection webhooks would select the same namespaces and pods. Remove the tag or install under another --revision.\n',
    );
    expect(tag).toMatchObject({ code: 1, stderr: ISSUES });

    const unrecorded = await meshctl('x', 'precheck', '-r', 'stable');
    expect(unrecorded.stdout).toContain(
      'Error [MSH1002] (Pod meshd-stable-6b4-x3.mesh-system) A control plane of revision "stable" is already running, but no installation of it is recorded',
    );
    expect(unrecorded.code).toBe(1);
    // The default revision is neither installed nor running here.
    expect(await meshctl('x', 'precheck')).toEqual({ code: 0, stdout: '', stderr: SUCCESS });
  });

  test("alpha annotations of the cluster are reported as the reference's upgrade precheck does (MSH0136, an info: exit 0)", async () => {
    const file = join(dir, 'alpha.yaml');
    writeFileSync(
      file,
      'apiVersion: v1\nkind: Service\nmetadata: {name: alpha, namespace: default, annotations: {networking.mesh.io/exportTo: "."}}\nspec: {ports: [{port: 80}]}\n',
    );
    expect((await kubectl('apply', '-f', file)).code).toBe(0);
    const result = await meshctl('x', 'precheck');
    expect(result.stdout).toBe(
      'Info [MSH0136] (Service alpha.default) Annotation "networking.mesh.io/exportTo" is part of an alpha-phase feature and may be incompletely supported.\n',
    );
    expect(result.code).toBe(0);
    expect((await kubectl('delete', '-f', file)).code).toBe(0);
  });
});

describe('meshctl x revision describe and list -v', () => {
  test('describe -v: the record and its customizations, webhooks, meshd and gateway pods, namespaces and pods using it', async () => {
    const result = await meshctl('x', 'revision', 'describe', 'canary', '-v');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expectGoldenText(join(GOLDEN, 'describe-canary-verbose.golden.txt'), withoutAges(result.stdout));
    const brief = await meshctl('x', 'revision', 'describe', 'canary');
    expect(brief.stdout).not.toContain('PODS:');
    expect(brief.stdout).toContain('CONTROL PLANE:\nREVISION MESHD-ENABLED CONTROL-PLANE-PODS\ncanary   YES           mesh-system/meshd-canary-7d9f-x1\n');
  });

  test('describe -o json', async () => {
    const result = await meshctl('x', 'revision', 'describe', 'canary', '-o', 'json', '-v');
    expect(result.code).toBe(0);
    const description = JSON.parse(result.stdout) as { pods: { name: string; age: string }[] };
    expect(description).toMatchObject({
      revision: 'canary',
      meshOperators: [{ namespace: 'mesh-system', name: 'installed-state-canary', profile: 'default', components: ['pilot', 'ingressgateways'] }],
      webhooks: [
        { name: 'mesh-revision-tag-prod', revision: 'canary', tag: 'prod' },
        { name: 'mesh-sidecar-injector-canary', revision: 'canary' },
      ],
      meshdEnabled: true,
      controlPlanePods: [{ namespace: 'mesh-system', name: 'meshd-canary-7d9f-x1', address: '10.1.0.5', status: 'Running' }],
      ingressGateways: { declared: ['mesh-ingressgateway'], pods: [{ name: 'mesh-ingressgateway-5c8-x2' }] },
      egressGateways: { declared: [], pods: [] },
      namespaces: [
        { name: 'apps', label: 'mesh.io/rev=prod' },
        { name: 'legacy', label: 'mesh.io/rev=canary' },
      ],
    });
    // reviews by its sidecar's status, ratings by its label, the gateway by its label; not the default revision's details.
    expect(description.pods.map((p) => p.name)).toEqual(['reviews', 'ratings', 'mesh-ingressgateway-5c8-x2']);
    expect(description.pods.every((p) => /^\d+s$/.test(p.age))).toBe(true);
  });

  test('a missing revision is an error naming it; a bad format names the flag', async () => {
    expect(await meshctl('x', 'revision', 'describe', 'nope')).toEqual({ code: 1, stdout: '', stderr: 'Error: revision nope is not present\n' });
    const bad = await meshctl('x', 'revision', 'describe', 'canary', '-o', 'yaml');
    expect(bad.stderr).toBe('Error: -o/--output: unknown format yaml: it should be table or json\n');
    expect(bad.code).toBe(2);
  });

  test("list -v: the CUSTOMIZATIONS column and each revision's control plane and gateways", async () => {
    const result = await meshctl('x', 'revision', 'list', '-v');
    expect(result.stderr).toBe('');
    expectGoldenText(join(GOLDEN, 'list-verbose.golden.txt'), result.stdout);
  });
});
