import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { parseAllDocuments } from 'yaml';
import { newMetrics, newNopLogger } from '../runtime/index.js';
import { applyMeshConfig, DEFAULT_MESH_CONFIG, parseMeshConfigYaml } from '../crds/index.js';
import { certificateAuthority, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { goldenCases, readCaseInput, readGolden } from '../testing/golden.js';
import { runBin } from '../testing/run-bin.js';
import { newAdmissionServer, type AdmissionServer } from './admission-server.js';
import { BUILTIN_INJECTOR_CONFIG, type Pod } from './inject/index.js';
import { newInjectionWebhook } from './injection-webhook.js';
import type { WebhookSettings } from './webhook-settings.js';

// The injection golden cases (webhook/inject/testdata/inject) through the two real ways users reach
// them: the daemon's /inject over HTTPS (the AdmissionReview's JSON patch applied to the pod) and
// the built `meshctl orch-inject`. Both must give exactly the golden pod.
const FOLDER = 'webhook/inject/testdata/inject';

/** What a case changes beyond its pod, as settings, the URL, the injector's values and the mesh config. */
interface Transport {
  readonly settings?: Partial<WebhookSettings>;
  readonly path?: string;
  readonly values?: Record<string, unknown>;
  readonly meshConfig?: string;
}
const TRANSPORTS: Readonly<Record<string, Transport>> = {
  revision: { settings: { revision: 'canary' } },
  'url-env-legacy-probes': { settings: { rewriteProbeLegacyLocalhost: true, legacyFsGroup: false }, path: '/inject/cluster/east/net/net-east/extra_flag/on' },
  'values-overrides': {
    values: {
      global: {
        imagePullSecrets: ['reg-secret'],
        meshID: 'mesh1',
        caAddress: 'custom-ca.example:15012',
        hub: 'registry.example/mesh',
        tag: '1.2.3',
        logAsJson: true,
        imagePullPolicy: 'IfNotPresent',
      },
    },
    meshConfig: 'trustDomain: example.org\nenablePrometheusMerge: false\n',
  },
  cni: { values: { mesh_cni: { enabled: true } } },
};
const DEFAULT_SETTINGS: WebhookSettings = {
  injectEnabled: true,
  injectionWebhookConfigName: 'mesh-sidecar-injector',
  legacyFsGroup: true,
  rewriteProbeLegacyLocalhost: false,
  revision: '',
};

function valuesWith(overlay: Record<string, unknown>): string {
  const merge = (base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> => {
    const out = { ...base };
    for (const [key, value] of Object.entries(over)) {
      const current = out[key];
      out[key] = isObject(current) && isObject(value) ? merge(current, value) : value;
    }
    return out;
  };
  return JSON.stringify(merge(JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as Record<string, unknown>, overlay));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Golden = Pod | { skipped: string } | { error: string };

let dir: string;
let ca: KeyAndCert;
const servers = new Map<string, { server: AdmissionServer; stop: AbortController; done: Promise<void> }>();

async function serverFor(name: string): Promise<AdmissionServer> {
  const key = name in TRANSPORTS ? name : 'default';
  const existing = servers.get(key);
  if (existing) return existing.server;
  const transport = TRANSPORTS[key] ?? {};
  const webhook = newInjectionWebhook({
    settings: { ...DEFAULT_SETTINGS, ...transport.settings },
    meshConfig: () => applyMeshConfig(DEFAULT_MESH_CONFIG, parseMeshConfigYaml(transport.meshConfig ?? '', 'test')),
    metrics: newMetrics('pilot-discovery'),
    log: newNopLogger(),
  });
  webhook.offer({ text: { config: BUILTIN_INJECTOR_CONFIG.config, values: valuesWith(transport.values ?? {}) }, origin: 'test' });
  const pair = await signedCertificate(dir, `meshd-${key}`, 'IP:127.0.0.1', ca);
  const identity = { certChainPem: readFileSync(pair.certFile, 'utf8'), keyPem: readFileSync(pair.keyFile, 'utf8') };
  const server = newAdmissionServer({
    address: { host: '127.0.0.1', port: 0 },
    identity: () => Promise.resolve({ watch: (listener) => (listener(identity), () => undefined) }),
    routes: new Map([['/inject/', webhook.route]]),
    log: newNopLogger(),
  });
  const stop = new AbortController();
  const done = server.start(stop.signal);
  await server.waitForReady();
  servers.set(key, { server, stop, done });
  return server;
}

async function postReview(server: AdmissionServer, path: string, pod: Pod): Promise<{ allowed: boolean; patch?: string; status?: { message: string } }> {
  const namespace = String((pod['metadata'] as Record<string, unknown>)['namespace'] ?? '');
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'u',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      object: pod,
    },
  });
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      `https://127.0.0.1:${server.boundAddress().port}${path}`,
      { method: 'POST', ca: readFileSync(ca.certFile), headers: { 'content-type': 'application/json' } },
      (res) => {
        let out = '';
        res.on('data', (chunk: Buffer) => (out += chunk.toString()));
        res.on('end', () => resolve(out));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  return (JSON.parse(text) as { response: { allowed: boolean; patch?: string; status?: { message: string } } }).response;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'inject-transports-'));
  ca = await certificateAuthority(dir, 'mesh-root');
});

afterAll(async () => {
  for (const { stop, done } of servers.values()) {
    stop.abort();
    await done;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('the injection golden cases through /inject over HTTPS', () => {
  test.each(goldenCases(FOLDER))('%s', async (name) => {
    const pod = readCaseInput<Pod>(FOLDER, name);
    const golden = readGolden<Golden>(FOLDER, name);
    const response = await postReview(await serverFor(name), TRANSPORTS[name]?.path ?? '/inject', pod);
    if ('error' in golden) {
      expect(response).toMatchObject({ allowed: false, status: { message: golden.error } });
      return;
    }
    expect(response.allowed).toBe(true);
    if ('skipped' in golden) {
      expect(response.patch).toBeUndefined();
      return;
    }
    const patch = JSON.parse(Buffer.from(response.patch ?? '', 'base64').toString()) as Operation[];
    expect(fastJsonPatch.applyPatch(structuredClone(pod), patch, true, false).newDocument).toEqual(golden);
  });
});

describe('the injection golden cases through the built meshctl orch-inject', () => {
  test('every default-settings case that injects gives its golden pod; re-running on the output changes nothing', async () => {
    // One multi-document run: cases that need other settings, fail or are skipped are left out.
    const names = goldenCases(FOLDER).filter((name) => {
      const golden = readGolden<Golden>(FOLDER, name);
      return !(name in TRANSPORTS) && !('error' in golden) && !('skipped' in golden) && name !== 'already-injected';
    });
    expect(names.length).toBeGreaterThan(15);
    const input = join(dir, 'all.yaml');
    writeFileSync(input, names.map((name) => readFileSync(join(FOLDER, `${name}.in.yaml`), 'utf8')).join('---\n'));
    const result = await runBin('meshctl', ['orch-inject', '-f', input], { env: { HOME: '/nonexistent', KUBECONFIG: '' } });
    expect(result.stderr).toBe('');
    const outputs = parseAllDocuments(result.stdout)
      .map((doc) => doc.toJS() as Pod)
      .filter((doc) => doc !== null);
    expect(outputs).toEqual(names.map((name) => readGolden<Pod>(FOLDER, name)));
    // The already injected output is skipped by kube-inject, as the reference does: unchanged.
    writeFileSync(join(dir, 'again.yaml'), result.stdout);
    const again = await runBin('meshctl', ['orch-inject', '-f', join(dir, 'again.yaml')], { env: { HOME: '/nonexistent', KUBECONFIG: '' } });
    expect(
      parseAllDocuments(again.stdout)
        .map((doc) => doc.toJS() as Pod)
        .filter((doc) => doc !== null),
    ).toEqual(outputs);
    expect(again.stderr).toContain('===> Skipping injection because');
  });
});
