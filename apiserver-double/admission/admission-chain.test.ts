import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServerDouble } from '../index.js';
import type { ApiServerDouble } from '../index.js';
import { closedPort, configureWebhooks, removeWebhookConfigurations, startWebhookTestServer, webhookEntry } from './testing/webhook-test-server.js';
import type { JsonObject, WebhookTestServer } from './testing/webhook-test-server.js';

interface Answer {
  status: number;
  body: JsonObject;
  warnings: string | null;
}

describe('admission chain: which webhooks are called, and what their failures do', () => {
  let apiServer: ApiServerDouble;
  let webhooks: WebhookTestServer;
  let work: string;

  const send = async (method: string, path: string, body: unknown, contentType = 'application/json'): Promise<Answer> => {
    const response = await fetch(`${apiServer.url}${path}`, { method, headers: { 'Content-Type': contentType }, body: JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as JsonObject, warnings: response.headers.get('warning') };
  };
  const createNamespace = async (name: string, labels: Record<string, string> = {}): Promise<void> => {
    expect((await send('POST', '/api/v1/namespaces', { metadata: { name, labels } })).status).toBe(201);
  };
  const createConfigMap = (namespace: string, name: string, labels: Record<string, string> = {}, query = ''): Promise<Answer> =>
    send('POST', `/api/v1/namespaces/${namespace}/configmaps${query}`, { metadata: { name, labels }, data: { a: '1' } });
  const byUrl = (path: string, caBundle = webhooks.caBundle): JsonObject => ({ url: `${webhooks.url}${path}`, caBundle });
  const operationsAt = (path: string): unknown[] => webhooks.reviewsAt(path).map((r) => (r['request'] as JsonObject)['operation']);

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'mesh-admission-chain-'));
    webhooks = await startWebhookTestServer(work, 'webhook.mesh-system.svc');
    apiServer = await startApiServerDouble({
      bookmarkIntervalMs: 0,
      serviceResolver: (namespace, name) => (namespace === 'mesh-system' && name === 'webhook' ? { host: '127.0.0.1', port: webhooks.port } : undefined),
    });
  }, 60_000);

  afterEach(async () => removeWebhookConfigurations(apiServer.url));

  afterAll(async () => {
    await apiServer?.close();
    await webhooks?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  test('rules: the operation, group, resource and scope filter which webhooks see a request', async () => {
    await createNamespace('rules');
    await configureWebhooks(apiServer.url, 'validating', 'rules', [
      webhookEntry('update-only.example.io', byUrl('/update-only'), {
        rules: [{ operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      }),
      webhookEntry('secrets.example.io', byUrl('/secrets'), { rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['secrets'] }] }),
      webhookEntry('everything.example.io', byUrl('/everything'), {
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Namespaced' }],
      }),
      webhookEntry('cluster.example.io', byUrl('/cluster'), {
        rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], scope: 'Cluster' }],
      }),
      webhookEntry('pod-status.example.io', byUrl('/pod-status'), {
        rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/status'] }],
      }),
    ]);

    expect((await createConfigMap('rules', 'one')).status).toBe(201);
    const created = await send('GET', '/api/v1/namespaces/rules/configmaps/one', undefined);
    expect((await send('PUT', '/api/v1/namespaces/rules/configmaps/one', { ...created.body, data: { a: '2' } })).status).toBe(200);
    const pod = await send('POST', '/api/v1/namespaces/rules/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    expect(pod.status).toBe(201);
    expect((await send('PUT', '/api/v1/namespaces/rules/pods/p/status', { ...pod.body, status: { phase: 'Running' } })).status).toBe(200);
    expect((await send('POST', '/api/v1/namespaces', { metadata: { name: 'rules-cluster-scoped' } })).status).toBe(201);

    expect(operationsAt('/update-only')).toEqual(['UPDATE']);
    const update = webhooks.reviewsAt('/update-only')[0]?.['request'] as JsonObject;
    expect(update).toMatchObject({ oldObject: { data: { a: '1' } }, object: { data: { a: '2' } }, options: { kind: 'UpdateOptions' } });
    expect(operationsAt('/secrets')).toEqual([]);
    expect(webhooks.reviewsAt('/everything').map((r) => (r['request'] as JsonObject)['resource'])).toEqual([
      { group: '', version: 'v1', resource: 'configmaps' },
      { group: '', version: 'v1', resource: 'configmaps' },
      { group: '', version: 'v1', resource: 'pods' },
    ]);
    expect(webhooks.reviewsAt('/cluster').map((r) => (r['request'] as JsonObject)['name'])).toEqual(['rules-cluster-scoped']);
    expect(webhooks.reviewsAt('/pod-status').map((r) => (r['request'] as JsonObject)['subResource'])).toEqual(['status']);
  });

  test("namespaceSelector matches the namespace's labels; objectSelector the new or the old object's labels", async () => {
    await createNamespace('selected', { team: 'mesh' });
    await createNamespace('unselected', { team: 'other' });
    await configureWebhooks(apiServer.url, 'validating', 'selectors', [
      webhookEntry('namespace.example.io', byUrl('/by-namespace'), {
        namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['mesh'] }] },
      }),
      webhookEntry('object.example.io', byUrl('/by-object'), { objectSelector: { matchLabels: { watched: 'yes' } } }),
    ]);

    await createConfigMap('selected', 'in-selected');
    await createConfigMap('unselected', 'in-unselected');
    await createConfigMap('unselected', 'watched', { watched: 'yes' });
    const watched = await send('GET', '/api/v1/namespaces/unselected/configmaps/watched', undefined);
    const unwatched = { ...watched.body, metadata: { ...(watched.body['metadata'] as JsonObject), labels: {} } };
    expect((await send('PUT', '/api/v1/namespaces/unselected/configmaps/watched', unwatched)).status).toBe(200);
    await createConfigMap('unselected', 'unwatched');

    expect(webhooks.reviewsAt('/by-namespace').map((r) => (r['request'] as JsonObject)['name'])).toEqual(['in-selected']);
    expect(
      webhooks.reviewsAt('/by-object').map((r) => `${String((r['request'] as JsonObject)['operation'])} ${String((r['request'] as JsonObject)['name'])}`),
    ).toEqual(['CREATE watched', 'UPDATE watched']);
  });

  test('a custom resource and a merge patch go through the chain as an UPDATE; webhook configurations never do', async () => {
    await createNamespace('custom');
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.io' },
      spec: {
        group: 'example.io',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    };
    expect((await send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd)).status).toBe(201);
    await configureWebhooks(apiServer.url, 'mutating', 'all', [
      webhookEntry('all.example.io', byUrl('/all'), { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] }),
    ]);
    webhooks.answer('/all', (request) =>
      (request['kind'] as JsonObject)['kind'] === 'Widget' ? { allowed: true, patch: [{ op: 'add', path: '/spec/size', value: 3 }] } : { allowed: true },
    );

    const widget = await send('POST', '/apis/example.io/v1/namespaces/custom/widgets', {
      apiVersion: 'example.io/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { colour: 'red' },
    });
    expect(widget).toMatchObject({ status: 201, body: { spec: { colour: 'red', size: 3 } } });
    const patched = await send('PATCH', '/apis/example.io/v1/namespaces/custom/widgets/w', { spec: { colour: 'blue' } }, 'application/merge-patch+json');
    expect(patched).toMatchObject({ status: 200, body: { spec: { colour: 'blue', size: 3 } } });
    expect(apiServer.objects('example.io/v1', 'Widget', 'custom').map((o) => [o['spec'], o.metadata?.generation])).toEqual([[{ colour: 'blue', size: 3 }, 2]]);
    webhooks.answer('/all', () => ({ allowed: true, patch: [{ op: 'replace', path: '/spec/size', value: 4 }] }));
    const current = await send('GET', '/apis/example.io/v1/namespaces/custom/widgets/w', undefined);
    expect((await send('PUT', '/apis/example.io/v1/namespaces/custom/widgets/w', current.body)).body).toMatchObject({
      spec: { size: 4 },
      metadata: { generation: 3 },
    });
    await configureWebhooks(apiServer.url, 'validating', 'not-reviewed', [webhookEntry('n.example.io', byUrl('/all'))]);

    expect(
      webhooks.reviewsAt('/all').map((r) => [(r['request'] as JsonObject)['operation'], ((r['request'] as JsonObject)['kind'] as JsonObject)['kind']]),
    ).toEqual([
      ['CREATE', 'Widget'],
      ['UPDATE', 'Widget'],
      ['UPDATE', 'Widget'],
    ]);
    expect((webhooks.reviewsAt('/all')[1]?.['request'] as JsonObject)['options']).toMatchObject({ kind: 'PatchOptions' });
  });

  test('a denial: code 0 becomes 403 Forbidden; a given code and reason are kept; warnings come back as Warning headers', async () => {
    await createNamespace('denials');
    webhooks.answer('/deny', (request) =>
      request['name'] === 'invalid'
        ? { allowed: false, status: { code: 422, reason: 'Invalid', message: 'data.a must be a number word' } }
        : { allowed: false, warnings: ['first "warning"', 'second'], status: { message: 'not today' } },
    );
    await configureWebhooks(apiServer.url, 'validating', 'deny', [webhookEntry('deny.example.io', byUrl('/deny'))]);

    const forbidden = await createConfigMap('denials', 'forbidden');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({
      reason: 'Forbidden',
      code: 403,
      message: 'configmaps "forbidden" is forbidden: admission webhook "deny.example.io" denied the request: not today',
      details: { name: 'forbidden', group: '', kind: 'configmaps' },
    });
    expect(forbidden.warnings).toBe('299 - "first \\"warning\\"", 299 - "second"');
    const invalid = await createConfigMap('denials', 'invalid');
    expect(invalid).toMatchObject({
      status: 422,
      body: {
        reason: 'Invalid',
        message: 'configmaps "invalid" is forbidden: admission webhook "deny.example.io" denied the request: data.a must be a number word',
      },
    });
    expect(apiServer.objects('v1', 'ConfigMap', 'denials')).toEqual([]);
  });

  test('failurePolicy: a webhook server that is down rejects with Fail and is skipped with Ignore', async () => {
    await createNamespace('down');
    const port = await closedPort();
    const down = { url: `https://127.0.0.1:${port}/down`, caBundle: webhooks.caBundle };
    await configureWebhooks(apiServer.url, 'validating', 'down', [
      webhookEntry('ignored.example.io', down, { failurePolicy: 'Ignore', objectSelector: { matchLabels: { policy: 'ignore' } } }),
      webhookEntry('down.example.io', down, { objectSelector: { matchLabels: { policy: 'fail' } } }),
    ]);

    expect((await createConfigMap('down', 'ignored', { policy: 'ignore' })).status).toBe(201);
    const failed = await createConfigMap('down', 'failed', { policy: 'fail' });
    expect(failed).toMatchObject({
      status: 500,
      body: {
        reason: 'InternalError',
        message: `Internal error occurred: failed calling webhook "down.example.io": failed to call webhook: Post "https://127.0.0.1:${port}/down?timeout=10s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
      },
    });
    expect(apiServer.objects('v1', 'ConfigMap', 'down').map((o) => o.metadata?.name)).toEqual(['ignored']);
  });

  test('timeoutSeconds: a webhook that never answers fails closed or open after its timeout', async () => {
    await createNamespace('slow');
    webhooks.answer('/hang', () => 'hang');
    await configureWebhooks(apiServer.url, 'mutating', 'hang', [
      webhookEntry('hang-ignore.example.io', byUrl('/hang'), {
        timeoutSeconds: 1,
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { policy: 'ignore' } },
      }),
      webhookEntry('hang.example.io', byUrl('/hang'), { timeoutSeconds: 1, objectSelector: { matchLabels: { policy: 'fail' } } }),
    ]);

    const [ignored, failed] = await Promise.all([
      createConfigMap('slow', 'ignored', { policy: 'ignore' }),
      createConfigMap('slow', 'failed', { policy: 'fail' }),
    ]);
    expect(ignored.status).toBe(201);
    expect(failed.status).toBe(500);
    expect(failed.body['message']).toBe(
      `Internal error occurred: failed calling webhook "hang.example.io": failed to call webhook: Post "${webhooks.url}/hang?timeout=1s": context deadline exceeded`,
    );
    expect(webhooks.received.filter((r) => r.path === '/hang').map((r) => r.query)).toEqual(['?timeout=1s', '?timeout=1s']);
  });

  test('a caBundle that did not sign the server: TLS fails, Fail rejects and Ignore proceeds', async () => {
    await createNamespace('stranger');
    await configureWebhooks(apiServer.url, 'validating', 'stranger', [
      webhookEntry('stranger-ignore.example.io', byUrl('/stranger', webhooks.strangerCaBundle), {
        failurePolicy: 'Ignore',
        objectSelector: { matchLabels: { policy: 'ignore' } },
      }),
      webhookEntry('stranger.example.io', byUrl('/stranger', webhooks.strangerCaBundle), { objectSelector: { matchLabels: { policy: 'fail' } } }),
    ]);

    expect((await createConfigMap('stranger', 'ignored', { policy: 'ignore' })).status).toBe(201);
    const failed = await createConfigMap('stranger', 'failed', { policy: 'fail' });
    expect(failed.status).toBe(500);
    expect(failed.body['message']).toContain(
      `failed calling webhook "stranger.example.io": failed to call webhook: Post "${webhooks.url}/stranger?timeout=10s": tls: failed to verify certificate: x509: `,
    );
    expect(webhooks.reviewsAt('/stranger')).toEqual([]);
  });

  test('a response with another uid is an invalid response', async () => {
    await createNamespace('uid');
    webhooks.answer('/wrong-uid', () => ({ allowed: true, uid: 'not-the-request-uid' }));
    await configureWebhooks(apiServer.url, 'validating', 'uid', [webhookEntry('uid.example.io', byUrl('/wrong-uid'))]);

    const failed = await createConfigMap('uid', 'failed');
    const sent = (webhooks.reviewsAt('/wrong-uid')[0]?.['request'] as JsonObject)['uid'];
    expect(failed).toMatchObject({
      status: 500,
      body: {
        message: `Internal error occurred: failed calling webhook "uid.example.io": received invalid webhook response: expected response.uid="${String(sent)}", got "not-the-request-uid"`,
      },
    });
  });

  test('admissionReviewVersions: the first supported version is sent; v1beta1 answers are read too', async () => {
    await createNamespace('versions');
    webhooks.answer('/beta', () => ({ allowed: true, patch: [{ op: 'add', path: '/data/version', value: 'beta' }] }));
    await configureWebhooks(apiServer.url, 'mutating', 'versions', [
      webhookEntry('beta.example.io', byUrl('/beta'), { admissionReviewVersions: ['v2', 'v1beta1', 'v1'] }),
      webhookEntry('v1.example.io', byUrl('/v1'), { admissionReviewVersions: ['v1', 'v1beta1'] }),
    ]);

    const created = await createConfigMap('versions', 'both');
    expect(created).toMatchObject({ status: 201, body: { data: { a: '1', version: 'beta' } } });
    expect(webhooks.reviewsAt('/beta').map((r) => r['apiVersion'])).toEqual(['admission.k8s.io/v1beta1']);
    expect(webhooks.reviewsAt('/v1').map((r) => r['apiVersion'])).toEqual(['admission.k8s.io/v1']);
    expect((webhooks.reviewsAt('/v1')[0]?.['request'] as JsonObject)['object']).toMatchObject({ data: { version: 'beta' } });
  });

  test('a service reference is dialled through the resolver, with its path, and verified as <name>.<namespace>.svc', async () => {
    await createNamespace('service');
    await configureWebhooks(apiServer.url, 'validating', 'service', [
      webhookEntry('service.example.io', {
        service: { namespace: 'mesh-system', name: 'webhook', port: 8443, path: '/by-service' },
        caBundle: webhooks.caBundle,
      }),
      webhookEntry(
        'unknown.example.io',
        { service: { namespace: 'mesh-system', name: 'unknown', path: '/x' }, caBundle: webhooks.caBundle },
        { failurePolicy: 'Ignore' },
      ),
    ]);

    expect((await createConfigMap('service', 'reviewed')).status).toBe(201);
    expect(webhooks.received.filter((r) => r.path === '/by-service').map((r) => r.query)).toEqual(['?timeout=10s']);
    await configureWebhooks(apiServer.url, 'validating', 'unknown-service', [
      webhookEntry('unknown-fail.example.io', { service: { namespace: 'mesh-system', name: 'unknown' }, caBundle: webhooks.caBundle }),
    ]);
    expect((await createConfigMap('service', 'refused')).body['message']).toBe(
      'Internal error occurred: failed calling webhook "unknown-fail.example.io": failed to call webhook: Post "https://unknown.mesh-system.svc:443/?timeout=10s": service "unknown" not found',
    );
  });
});
