import { describe, expect, test } from '@jest/globals';
import { loadSettings } from '../../runtime/index.js';
import { agentSettingsFromSettings } from '../agent-settings.js';
import { buildProxyIdentity, loadProxyConfig, metadataFromEnvironment, parsePodLabels } from './proxy-identity.js';

describe('the proxy identity', () => {
  /** As the agent builds it: the proxy config's proxyMetadata under the environment, the labels file when there is one. */
  const identityWith = (env: Record<string, string>, proxyConfigText: string, labels?: Record<string, string>) => {
    const proxyConfig = loadProxyConfig('/nonexistent/mesh', proxyConfigText);
    const settings = loadSettings('pilot-agent', { POD_NAMESPACE: 'foo', INSTANCE_IP: '10.0.0.7', ...env }).withUnderlay(proxyConfig.proxyMetadata ?? {});
    return buildProxyIdentity({
      type: 'sidecar',
      pod: { ...agentSettingsFromSettings(settings).pod, ...(labels ? { labels } : {}) },
      domain: '',
      proxyConfig,
      meshVersion: '1.2.0',
    });
  };

  test('takes the pod name from POD_NAME, as injection sets it from the pod’s metadata', () => {
    expect(identityWith({ POD_NAME: 'httpbin-7d4f' }, '{}').podName).toBe('httpbin-7d4f');
    expect(identityWith({ POD_NAME: 'httpbin-7d4f' }, '{"proxyMetadata":{"POD_NAME":"other"}}').podName).toBe('httpbin-7d4f');
  });

  test('every MESH_META_* variable the injector sets is node metadata (WORKLOAD_NAME, OWNER, …); the agent’s own facts win', () => {
    const identity = identityWith(
      { MESH_META_WORKLOAD_NAME: 'httpbin', MESH_META_OWNER: 'kubernetes://apis/apps/v1/namespaces/foo/deployments/httpbin', MESH_META_NAMESPACE: 'spoofed' },
      '{}',
    );
    expect(identity.metadata).toMatchObject({
      WORKLOAD_NAME: 'httpbin',
      OWNER: 'kubernetes://apis/apps/v1/namespaces/foo/deployments/httpbin',
      NAMESPACE: 'foo',
    });
    expect(identityWith({}, '{}').metadata).not.toHaveProperty('WORKLOAD_NAME');
  });

  test('falls back to proxyMetadata’s POD_NAME without it', () => {
    expect(identityWith({}, '{"proxyMetadata":{"POD_NAME":"from-metadata"}}').podName).toBe('from-metadata');
  });

  test('node metadata carries the pod labels (the downward API file) as LABELS', () => {
    const pod = agentSettingsFromSettings(loadSettings('pilot-agent', { POD_NAMESPACE: 'foo', MESH_META_CLUSTER_ID: 'Kubernetes' })).pod;
    const labels = parsePodLabels('app="httpbin"\nversion="v1"\nsecurity.mesh.io/tlsMode="mesh"\nbroken line\n');
    const identity = buildProxyIdentity({
      type: 'sidecar',
      pod: { ...pod, labels },
      domain: '',
      proxyConfig: loadProxyConfig('/nonexistent/mesh', '{}'),
      meshVersion: '1.2.0',
    });
    expect(identity.metadata).toMatchObject({ CLUSTER_ID: 'Kubernetes', LABELS: { app: 'httpbin', version: 'v1', 'security.mesh.io/tlsMode': 'mesh' } });
    expect(identityWith({}, '{}').metadata).not.toHaveProperty('LABELS');
  });

  test('proxyMetadata is environment: MESH_META_<K> is node metadata <K>, other entries are settings, never metadata', () => {
    const identity = identityWith(
      {},
      JSON.stringify({
        proxyMetadata: { MESH_META_WORKLOAD_NAME: 'vm-app', MESH_META_DNS_CAPTURE: 'true', SERVICE_ACCOUNT: 'vm-sa', CANONICAL_SERVICE: 'vm-app' },
      }),
    );
    expect(identity.metadata).toMatchObject({ WORKLOAD_NAME: 'vm-app', DNS_CAPTURE: 'true', SERVICE_ACCOUNT: 'vm-sa' });
    expect(identity.spiffeId).toBe('spiffe://cluster.local/ns/foo/sa/vm-sa');
    expect(identity.metadata).not.toHaveProperty('MESH_META_WORKLOAD_NAME');
    expect(identity.metadata).not.toHaveProperty('CANONICAL_SERVICE');
  });

  test('the environment wins over proxyMetadata, for settings and metadata alike', () => {
    const identity = identityWith(
      { POD_NAMESPACE: 'from-env', MESH_META_NETWORK: 'env-net' },
      JSON.stringify({ proxyMetadata: { POD_NAMESPACE: 'from-config', MESH_META_NETWORK: 'config-net' } }),
    );
    expect(identity.namespace).toBe('from-env');
    expect(identity.metadata['NETWORK']).toBe('env-net');
  });

  test('MESH_METAJSON_<K> is node metadata <K> parsed as JSON; one that does not parse is left out', () => {
    const identity = identityWith(
      { MESH_METAJSON_ANNOTATIONS: '{"a":"b"}', MESH_METAJSON_BROKEN: '{not json' },
      JSON.stringify({ proxyMetadata: { MESH_METAJSON_PLATFORM: '{"zone":"z1","count":2}' } }),
    );
    expect(identity.metadata).toMatchObject({ ANNOTATIONS: { a: 'b' }, PLATFORM: { zone: 'z1', count: 2 } });
    expect(identity.metadata).not.toHaveProperty('BROKEN');
    expect(metadataFromEnvironment({ metaJsonEnv: { BROKEN: '{not json', OK: '1' } })).toEqual({ metadata: { OK: 1 }, invalid: ['BROKEN'] });
  });

  test("a VM's MESH_METAJSON_LABELS are LABELS without a labels file; with one, the file's labels are laid over them", () => {
    const vm = JSON.stringify({ proxyMetadata: { MESH_METAJSON_LABELS: '{"app":"vm-app","service.mesh.io/canonical-name":"vm-app"}' } });
    expect(identityWith({}, vm).metadata['LABELS']).toEqual({ app: 'vm-app', 'service.mesh.io/canonical-name': 'vm-app' });
    expect(identityWith({}, vm, { app: 'from-file', version: 'v2', 'pod-template-hash': '7d4f' }).metadata['LABELS']).toEqual({
      app: 'from-file',
      version: 'v2',
      'service.mesh.io/canonical-name': 'vm-app',
    });
    expect(identityWith({}, JSON.stringify({ proxyMetadata: { MESH_METAJSON_LABELS: '["not", "an", "object"]' } })).metadata).not.toHaveProperty('LABELS');
  });

  test('a bad setting in proxyMetadata is refused naming it', () => {
    expect(() => identityWith({}, JSON.stringify({ proxyMetadata: { MESH_META_DNS_CAPTURE: 'maybe' } }))).toThrow(/for MESH_META_DNS_CAPTURE/);
  });
});
