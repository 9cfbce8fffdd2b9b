import type { ProxyIdentity } from './proxy-identity.js';

export const GRPC_SERVER_LISTENER_TEMPLATE = 'xds.mesh.io/grpc/lds/inbound/%s';

/**
 * The xDS bootstrap a proxyless gRPC application reads (GRPC_XDS_BOOTSTRAP): the agent's xDS proxy
 * socket as the control plane (plain text: the agent adds TLS and the token), the node, the
 * server listener template, and `file_watcher` certificate providers over the certificates the
 * agent writes (OUTPUT_CERTS), so mutual TLS and authorization come from the mesh.
 */
export function buildGrpcBootstrap(identity: ProxyIdentity, xdsSocketPath: string, certificateDir: string): Record<string, unknown> {
  return {
    xds_servers: [{ server_uri: `unix://${xdsSocketPath}`, channel_creds: [{ type: 'insecure' }], server_features: ['xds_v3'] }],
    node: { id: identity.nodeId, metadata: { ...identity.metadata, GENERATOR: 'grpc' }, locality: { region: '', zone: '' } },
    server_listener_resource_name_template: GRPC_SERVER_LISTENER_TEMPLATE,
    certificate_providers: {
      default: {
        plugin_name: 'file_watcher',
        config: {
          certificate_file: `${certificateDir}/cert-chain.pem`,
          private_key_file: `${certificateDir}/key.pem`,
          ca_certificate_file: `${certificateDir}/root-cert.pem`,
          refresh_interval: '900s',
        },
      },
    },
  };
}
