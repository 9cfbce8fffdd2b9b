import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { CHARTS_DIR, helm } from '../testing/helm.js';
import { formatMessage } from './messages.js';
import { webhookOverlaps } from './webhook-overlap.js';

let workDir: string;
beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), 'webhook-overlap-'));
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

const injectorsOf = async (args: readonly string[]): Promise<V1MutatingWebhookConfiguration[]> => {
  const rendered = await helm(['template', 'meshd', join(CHARTS_DIR, 'meshd'), '--namespace', 'mesh-system', ...args], { workDir });
  expect(rendered.stderr).toBe('');
  return parseAllDocuments(rendered.stdout)
    .map((d) => d.toJS() as V1MutatingWebhookConfiguration | null)
    .filter((o): o is V1MutatingWebhookConfiguration => o?.kind === 'MutatingWebhookConfiguration');
};

describe('webhook overlap analysis (MSH0139)', () => {
  test('the injectors the meshd chart renders, a default and a canary revision with its tags, never overlap', async () => {
    const configurations = [...(await injectorsOf([])), ...(await injectorsOf(['--set', 'revision=canary', '--set', 'revisionTags={prod,stable}']))];
    expect(configurations.map((c) => c.metadata?.name)).toEqual(
      expect.arrayContaining(['mesh-sidecar-injector', 'mesh-sidecar-injector-canary', 'mesh-revision-tag-prod']),
    );
    expect(webhookOverlaps(configurations)).toEqual([]);
  });

  test('two revisions both injecting namespaces labelled mesh-injection=enabled overlap, each naming the other', async () => {
    const defaults = await injectorsOf([]);
    const copy = defaults.map((c) => ({ ...c, metadata: { ...c.metadata, name: 'second-injector', labels: {} } }));
    const lines = webhookOverlaps([...defaults, ...copy]).map(formatMessage);
    expect(lines).toContain(
      'Error [MSH0139] (MutatingWebhookConfiguration second-injector) Webhook overlaps with others: [mesh-sidecar-injector/namespace.sidecar-injector.mesh.io]. This may cause injection to occur twice.',
    );
    expect(
      lines.some((line) =>
        line.startsWith('Error [MSH0139] (MutatingWebhookConfiguration mesh-sidecar-injector) Webhook overlaps with others: [second-injector/'),
      ),
    ).toBe(true);
  });

  test('a configuration that is not an injector (no revision, no mesh webhook) is ignored', () => {
    const foreign: V1MutatingWebhookConfiguration = {
      metadata: { name: 'cert-manager' },
      webhooks: [{ name: 'webhook.cert-manager.io', clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    };
    const other: V1MutatingWebhookConfiguration = {
      metadata: { name: 'other' },
      webhooks: [{ name: 'webhook.other.io', clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    };
    expect(webhookOverlaps([foreign, other])).toEqual([]);
  });
});
