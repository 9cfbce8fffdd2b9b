import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ApiextensionsV1Api, CustomObjectsApi, KubernetesObjectApi, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import type { KubeConfig, KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble } from './index.js';
import { expectStatus } from './test-support.js';
import { waitFor } from '../testing/wait-for.js';

const GROUP = 'security.mesh.io';
const VERSION = 'v1beta1';
const PLURAL = 'peerauthentications';

function peerAuthenticationCrd(): V1CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: 'PeerAuthentication', plural: PLURAL, singular: 'peerauthentication', shortNames: ['pa'], categories: ['mesh-io'] },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Mode', type: 'string', jsonPath: '.spec.mtls.mode' }],
          schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
        },
        { name: 'v1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } } },
      ],
    },
  };
}

async function getJson(url: string, accept?: string): Promise<{ status: number; body: Record<string, unknown>; contentType: string | null }> {
  const response = await fetch(url, accept ? { headers: { accept } } : {});
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, contentType: response.headers.get('content-type') };
}

describe('API server double: custom resource definitions', () => {
  let server: ApiServerDouble;
  let kc: KubeConfig;
  let custom: CustomObjectsApi;
  let extensions: ApiextensionsV1Api;

  beforeAll(async () => {
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    kc = server.kubeConfig();
    custom = kc.makeApiClient(CustomObjectsApi);
    extensions = kc.makeApiClient(ApiextensionsV1Api);
  });

  afterAll(async () => {
    await server.close();
  });

  test('before the CRD exists, its paths are 404 and discovery does not list it', async () => {
    const status = await expectStatus(() => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL }));
    expect(status.code).toBe(404);
    const groups = await getJson(`${server.url}/apis`);
    expect(JSON.stringify(groups.body)).not.toContain(GROUP);
  });

  test('creating the CRD serves the kind, sets Established, and shows it in discovery', async () => {
    const created = await extensions.createCustomResourceDefinition({ body: peerAuthenticationCrd() });
    expect(created.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    expect(created.status?.acceptedNames?.kind).toBe('PeerAuthentication');
    expect(created.status?.storedVersions).toEqual([VERSION]);

    const group = await getJson(`${server.url}/apis/${GROUP}`);
    expect(group.body).toMatchObject({ kind: 'APIGroup', name: GROUP, preferredVersion: { groupVersion: `${GROUP}/v1`, version: 'v1' } });
    const resources = await getJson(`${server.url}/apis/${GROUP}/${VERSION}`);
    expect(resources.body['resources']).toEqual([
      expect.objectContaining({
        name: PLURAL,
        singularName: 'peerauthentication',
        namespaced: true,
        kind: 'PeerAuthentication',
        shortNames: ['pa'],
        categories: ['mesh-io'],
        verbs: expect.arrayContaining(['watch', 'patch']),
      }),
      expect.objectContaining({ name: `${PLURAL}/status`, kind: 'PeerAuthentication', verbs: ['get', 'patch', 'update'] }),
    ]);
    const aggregated = await getJson(`${server.url}/apis`, 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json');
    expect(aggregated.contentType).toContain('as=APIGroupDiscoveryList');
    const items = aggregated.body['items'] as {
      metadata: { name: string };
      versions: { version: string; resources: { resource: string; scope: string }[] }[];
    }[];
    const entry = items.find((i) => i.metadata.name === GROUP);
    expect(entry?.versions.map((v) => v.version)).toEqual(['v1', VERSION]);
    expect(entry?.versions[1]?.resources[0]).toMatchObject({ resource: PLURAL, scope: 'Namespaced' });
  });

  test('custom objects: create, get, list, merge patch, status subresource, delete', async () => {
    const body = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: 'PeerAuthentication',
      metadata: { name: 'default' },
      spec: { mtls: { mode: 'STRICT' } },
      status: { ignored: true },
    };
    const created = (await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL, body })) as Record<
      string,
      any
    >;
    expect(created['metadata'].generation).toBe(1);
    expect(created['status']).toBeUndefined();
    const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL })) as {
      kind: string;
      items: Record<string, unknown>[];
    };
    expect(list.kind).toBe('PeerAuthenticationList');
    expect(list.items[0]).toMatchObject({ apiVersion: `${GROUP}/${VERSION}`, kind: 'PeerAuthentication' });
    const atV1 = (await custom.getNamespacedCustomObject({ group: GROUP, version: 'v1', namespace: 'default', plural: PLURAL, name: 'default' })) as Record<
      string,
      unknown
    >;
    expect(atV1['apiVersion']).toBe(`${GROUP}/v1`);

    const patched = (await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL, name: 'default', body: { spec: { mtls: { mode: 'PERMISSIVE' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as Record<string, any>;
    expect(patched['spec'].mtls.mode).toBe('PERMISSIVE');
    expect(patched['metadata'].generation).toBe(2);

    const withStatus = (await custom.patchNamespacedCustomObjectStatus(
      {
        group: GROUP,
        version: VERSION,
        namespace: 'default',
        plural: PLURAL,
        name: 'default',
        body: { status: { conditions: [{ type: 'Ready', status: 'True' }] }, spec: { mtls: { mode: 'DISABLE' } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as Record<string, any>;
    expect(withStatus['status'].conditions[0].type).toBe('Ready');
    expect(withStatus['spec'].mtls.mode).toBe('PERMISSIVE');
    expect(withStatus['metadata'].generation).toBe(2);

    const smp = await expectStatus(() =>
      custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL, name: 'default', body: { spec: {} } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(smp.code).toBe(415);

    const noRv = await expectStatus(() =>
      custom.replaceNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: 'default',
        plural: PLURAL,
        name: 'default',
        body: { ...body, metadata: { name: 'default' } },
      }),
    );
    expect(noRv.code).toBe(422);

    expect(server.objects(`${GROUP}/${VERSION}`, 'PeerAuthentication', 'default')).toHaveLength(1);
    await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL, name: 'default' });
    expect(server.objects(`${GROUP}/${VERSION}`, 'PeerAuthentication', 'default')).toHaveLength(0);
  });

  test('KubernetesObjectApi finds the new kind through discovery and applies it server-side', async () => {
    const objects = KubernetesObjectApi.makeApiClient(kc);
    const applied = await objects.patch(
      {
        apiVersion: `${GROUP}/${VERSION}`,
        kind: 'PeerAuthentication',
        metadata: { name: 'via-apply', namespace: 'default' },
        spec: { mtls: { mode: 'STRICT' } },
      } as KubernetesObject,
      undefined,
      undefined,
      'mesh-test',
      false,
      PatchStrategy.ServerSideApply,
    );
    expect(applied.metadata?.uid).toBeDefined();
  });

  test('a table request prints the additional printer columns', async () => {
    const table = await getJson(
      `${server.url}/apis/${GROUP}/${VERSION}/namespaces/default/${PLURAL}`,
      'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    );
    expect(table.body['kind']).toBe('Table');
    expect((table.body['columnDefinitions'] as { name: string }[]).map((c) => c.name)).toEqual(['Name', 'Mode']);
    expect((table.body['rows'] as { cells: unknown[] }[])[0]?.cells).toEqual(['via-apply', 'STRICT']);
  });

  test('an invalid CRD is 422', async () => {
    const bad = peerAuthenticationCrd();
    bad.metadata = { name: 'wrong.name.io' };
    const status = await expectStatus(() => extensions.createCustomResourceDefinition({ body: bad }));
    expect(status).toMatchObject({ code: 422, reason: 'Invalid' });
  });

  test('deleting the CRD deletes its objects, ends their watches and unserves the kind', async () => {
    const events: string[] = [];
    let ended = false;
    await new Watch(kc).watch(
      `/apis/${GROUP}/${VERSION}/namespaces/default/${PLURAL}`,
      {},
      (type) => events.push(type),
      () => {
        ended = true;
      },
    );
    await waitFor(() => events.length === 1, { description: 'initial event', timeoutMs: 3000 });
    await extensions.deleteCustomResourceDefinition({ name: `${PLURAL}.${GROUP}` });
    await waitFor(() => ended, { description: 'watch end', timeoutMs: 3000 });
    expect(events).toEqual(['ADDED', 'DELETED']);
    expect(server.objects(`${GROUP}/${VERSION}`, 'PeerAuthentication')).toHaveLength(0);
    const status = await expectStatus(() => custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: PLURAL }));
    expect(status.code).toBe(404);
  });
});
