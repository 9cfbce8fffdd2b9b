/** The proxy container's env entries injection writes and uninjection reads back. */
export const ENV = {
  appProbers: 'MESH_ORCH_APP_PROBERS',
  prometheusAnnotations: 'MESH_PROMETHEUS_ANNOTATIONS',
  clusterId: 'MESH_META_CLUSTER_ID',
  network: 'MESH_META_NETWORK',
} as const;

/** Where Prometheus scrapes the merged metrics of the app and the proxy on the status port. */
export const MERGED_METRICS_PATH = '/stats/prometheus';
