/** The agent's SDS, as every TLS context names it: cluster `sds-grpc`, secrets `default` and `ROOTCA`. */
export const SDS_CLUSTER = 'sds-grpc';
export const WORKLOAD_SECRET = 'default';
export const ROOT_SECRET = 'ROOTCA';

/** `SdsSecretConfig` for one secret of the agent's SDS server. */
export function sdsSecretConfig(name: string): object {
  return {
    name,
    sds_config: {
      api_config_source: {
        api_type: 'GRPC',
        transport_api_version: 'V3',
        grpc_services: [{ envoy_grpc: { cluster_name: SDS_CLUSTER } }],
        set_node_on_first_message_only: true,
      },
      initial_fetch_timeout: { seconds: 0 },
      resource_api_version: 'V3',
    },
  };
}

/** `SdsSecretConfig` for a secret the daemon serves over the ADS stream itself (`kubernetes://…`). */
export function adsSecretConfig(name: string): object {
  return { name, sds_config: { ads: {}, resource_api_version: 'V3' } };
}
