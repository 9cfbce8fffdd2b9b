import { describe, expect, test } from '@jest/globals';
import { loadSettings } from '../../runtime/index.js';
import { buildGrpcBootstrap, GRPC_SERVER_LISTENER_TEMPLATE } from './grpc-bootstrap.js';
import { buildProxyIdentity, loadProxyConfig } from './proxy-identity.js';
import { agentSettingsFromSettings } from '../agent-settings.js';

describe('the proxyless gRPC bootstrap', () => {
  test('names the agent socket, the node, the listener template and file_watcher certificates', () => {
    const proxyConfig = loadProxyConfig('/nonexistent/mesh', '{"proxyMetadata":{"MESH_META_GENERATOR":"grpc","POD_NAME":"echo-1"}}');
    const settings = loadSettings('pilot-agent', { POD_NAMESPACE: 'default', INSTANCE_IP: '10.0.5.1', SERVICE_ACCOUNT: 'echo' }).withUnderlay(
      proxyConfig.proxyMetadata ?? {},
    );
    const identity = buildProxyIdentity({
      type: 'sidecar',
      pod: agentSettingsFromSettings(settings).pod,
      domain: '',
      proxyConfig,
      meshVersion: '1.2.0',
    });
    const bootstrap = buildGrpcBootstrap(identity, '/var/run/mesh/XDS', '/var/run/mesh/certs') as {
      xds_servers: { server_uri: string }[];
      node: { id: string; metadata: Record<string, string> };
      server_listener_resource_name_template: string;
      certificate_providers: { default: { plugin_name: string; config: Record<string, string> } };
    };
    expect(bootstrap.xds_servers[0]?.server_uri).toBe('unix:///var/run/mesh/XDS');
    expect(bootstrap.node.id).toBe('sidecar~10.0.5.1~echo-1.default~default.svc.cluster.local');
    expect(bootstrap.node.metadata['GENERATOR']).toBe('grpc');
    expect(bootstrap.server_listener_resource_name_template).toBe(GRPC_SERVER_LISTENER_TEMPLATE);
    expect(bootstrap.certificate_providers.default).toMatchObject({
      plugin_name: 'file_watcher',
      config: { certificate_file: '/var/run/mesh/certs/cert-chain.pem', ca_certificate_file: '/var/run/mesh/certs/root-cert.pem' },
    });
  });
});
