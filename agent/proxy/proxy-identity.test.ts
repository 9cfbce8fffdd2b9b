import { describe, expect, test } from '@jest/globals';
import { loadSettings } from '../../runtime/index.js';
import { agentSettingsFromSettings } from '../agent-settings.js';
import { buildProxyIdentity, loadProxyConfig, parsePodLabels } from './proxy-identity.js';

describe('the proxy identity', () => {
  const identityWith = (env: Record<string, string>, proxyConfig: string) =>
    buildProxyIdentity({
      type: 'sidecar',
      pod: agentSettingsFromSettings(loadSettings('pilot-agent', { POD_NAMESPACE: 'foo', INSTANCE_IP: '10.0.0.7', ...env })).pod,
      domain: '',
      proxyConfig: loadProxyConfig('/nonexistent/mesh', proxyConfig),
      meshVersion: '1.2.0',
    });

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
});
