import type { Program } from './settings-info.js';

/** The seeds' aggregation kinds, and the prom-client type each one maps to. */
export type SeedMetricType = 'Sum' | 'Count' | 'LastValue' | 'Distribution';
export type PromMetricType = 'counter' | 'gauge' | 'histogram';
export type MetricUnit = 'seconds' | 'milliseconds' | 'bytes' | 'count';

export interface MetricSpec {
  name: string;
  /** The prom-client type: Sum and Count → counter, LastValue → gauge, Distribution → histogram. */
  type: PromMetricType;
  seedType: SeedMetricType;
  help: string;
  /** Bounded enums only (type, reason, result): never a pod name, a proxy id or an error text. */
  labelNames: readonly string[];
  programs: readonly Program[];
  unit?: MetricUnit;
  /** Histograms only: upper bounds, ascending. */
  buckets?: readonly number[];
  /** Not in the seeds' lists: a metric the reference exports that a seed behaviour asks for (the DNS proxy's counts). */
  beyondSeed?: true;
}

// Who exports what: the seed's shared set runs in the daemon and the agent; the operator
// (meshctl) lists the daemon's set plus its own.
const SHARED = ['pilot-discovery', 'pilot-agent', 'meshctl'] as const;
const DAEMON = ['pilot-discovery', 'meshctl'] as const;
const AGENT = ['pilot-agent'] as const;
const OPERATOR = ['meshctl'] as const;

const PUSH_SECONDS = [0.01, 0.1, 0.5, 1, 3, 5, 10, 20, 30] as const;
const PROXY_SECONDS = [0.1, 0.5, 1, 3, 5, 10, 20, 30] as const;
const SEND_SECONDS = [0.01, 0.1, 1, 3, 5, 10, 20, 30] as const;
const DNS_SECONDS = [0.001, 0.005, 0.01, 0.1, 1, 5] as const;
/** 1 B … 10 MB, ×10 per bucket. */
const CONFIG_BYTES = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000] as const;
/** 1 ms … about 2.3 h, doubling: event spans and snapshot lifetimes. */
const SPAN_MILLISECONDS = [
  1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 524288, 1048576, 2097152, 4194304, 8388608,
] as const;
const CONVERSION_MILLISECONDS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384] as const;
const EVENTS_PER_SNAPSHOT = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256] as const;

/**
 * Every metric the seeds list, under its exact name. Label names follow the reference mesh,
 * minus the unbounded ones it had (node id, error text, config name).
 */
// One metric per line, as the seed's table reads: the formatter leaves the table alone.
// prettier-ignore
export const METRIC_CATALOG = [
  // Shared by the daemon and the agent: Sum.
  { name: 'auto_registration_deletes_total', type: 'counter', seedType: 'Sum', help: 'Total number of auto-registered workload entries cleaned up by the periodic timer.', labelNames: [], programs: SHARED },
  { name: 'auto_registration_errors_total', type: 'counter', seedType: 'Sum', help: 'Total number of auto-registration errors.', labelNames: [], programs: SHARED },
  { name: 'auto_registration_success_total', type: 'counter', seedType: 'Sum', help: 'Total number of successful auto-registrations.', labelNames: [], programs: SHARED },
  { name: 'auto_registration_unregister_total', type: 'counter', seedType: 'Sum', help: 'Total number of auto-registration unregistrations.', labelNames: [], programs: SHARED },
  { name: 'auto_registration_updates_total', type: 'counter', seedType: 'Sum', help: 'Total number of auto-registration updates.', labelNames: [], programs: SHARED },
  { name: 'controller_sync_errors_total', type: 'counter', seedType: 'Sum', help: 'Total number of errors syncing controllers, by cluster.', labelNames: ['cluster'], programs: SHARED },
  { name: 'num_outgoing_retries', type: 'counter', seedType: 'Sum', help: 'Number of outgoing retry requests (to a token exchange server, the CA, ...).', labelNames: ['request_type'], programs: SHARED },
  { name: 'pilot_inbound_updates', type: 'counter', seedType: 'Sum', help: 'Total number of updates received by the daemon, by type (config, eds, svc, svcdelete).', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_jwks_resolver_network_fetch_fail_total', type: 'counter', seedType: 'Sum', help: 'Total number of failed network fetches by the JWKS resolver.', labelNames: [], programs: SHARED },
  { name: 'pilot_jwks_resolver_network_fetch_success_total', type: 'counter', seedType: 'Sum', help: 'Total number of successful network fetches by the JWKS resolver.', labelNames: [], programs: SHARED },
  { name: 'pilot_orch_cfg_events', type: 'counter', seedType: 'Sum', help: 'Config events from the orchestrator, by kind and event (add, update, delete).', labelNames: ['type', 'event'], programs: SHARED },
  { name: 'pilot_orch_endpoints_with_no_pods', type: 'counter', seedType: 'Sum', help: 'Endpoints that do not have any corresponding pod.', labelNames: [], programs: SHARED },
  { name: 'pilot_orch_reg_events', type: 'counter', seedType: 'Sum', help: 'Service registry events from the orchestrator, by kind and event (add, update, delete).', labelNames: ['type', 'event'], programs: SHARED },
  { name: 'pilot_push_triggers', type: 'counter', seedType: 'Sum', help: 'Total number of times a push was triggered, labelled by push reason.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_sds_certificate_errors_total', type: 'counter', seedType: 'Sum', help: 'Total number of failures to fetch an SDS key and certificate.', labelNames: [], programs: SHARED },
  { name: 'pilot_total_rejected_configs', type: 'counter', seedType: 'Sum', help: 'Total number of configs the daemon had to reject or ignore, by kind.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_total_xds_internal_errors', type: 'counter', seedType: 'Sum', help: 'Total number of internal xDS errors in the daemon.', labelNames: [], programs: SHARED },
  { name: 'pilot_total_xds_rejects', type: 'counter', seedType: 'Sum', help: 'Total number of xDS responses rejected by proxies, by xDS type.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_xds_delayed_push_timeouts_total', type: 'counter', seedType: 'Sum', help: 'Total number of xDS pushes that were delayed and timed out, by xDS type.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_xds_delayed_pushes_total', type: 'counter', seedType: 'Sum', help: 'Total number of xDS pushes that were delayed, by xDS type.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_xds_expired_nonce', type: 'counter', seedType: 'Sum', help: 'Total number of xDS requests with an expired nonce, by xDS type.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_xds_push_context_errors', type: 'counter', seedType: 'Sum', help: 'Number of errors (timeouts) initiating a push context.', labelNames: [], programs: SHARED },
  { name: 'pilot_xds_pushes', type: 'counter', seedType: 'Sum', help: 'Pushes and send errors for lds, rds, cds and eds, by type.', labelNames: ['type'], programs: SHARED },
  { name: 'pilot_xds_write_timeout', type: 'counter', seedType: 'Sum', help: 'xDS response write timeouts.', labelNames: [], programs: SHARED },
  { name: 'remote_cluster_sync_timeouts_total', type: 'counter', seedType: 'Sum', help: 'Number of times remote clusters took too long to sync, so start-up went on without them.', labelNames: [], programs: SHARED },
  { name: 'scrape_failures_total', type: 'counter', seedType: 'Sum', help: 'Total number of failed scrapes, by source (proxy, application, agent).', labelNames: ['type'], programs: SHARED },
  { name: 'scrapes_total', type: 'counter', seedType: 'Sum', help: 'Total number of scrapes.', labelNames: [], programs: SHARED },
  { name: 'xds_cache_evictions', type: 'counter', seedType: 'Sum', help: 'Total number of xDS cache evictions.', labelNames: [], programs: SHARED },
  { name: 'xds_cache_reads', type: 'counter', seedType: 'Sum', help: 'Total number of xDS cache reads, by result (hit, miss).', labelNames: ['type'], programs: SHARED },
  // Shared: Count.
  { name: 'galley_validation_config_delete_error', type: 'counter', seedType: 'Count', help: 'Validation webhook configuration delete errors, by reason.', labelNames: ['reason'], programs: SHARED },
  { name: 'galley_validation_config_load', type: 'counter', seedType: 'Count', help: 'Validation webhook configuration (re)loads.', labelNames: [], programs: SHARED },
  { name: 'galley_validation_config_load_error', type: 'counter', seedType: 'Count', help: 'Validation webhook configuration (re)load errors, by reason.', labelNames: ['reason'], programs: SHARED },
  { name: 'galley_validation_config_update_error', type: 'counter', seedType: 'Count', help: 'Validation webhook configuration update errors, by reason.', labelNames: ['reason'], programs: SHARED },
  { name: 'galley_validation_config_updates', type: 'counter', seedType: 'Count', help: 'Validation webhook configuration updates.', labelNames: [], programs: SHARED },
  // Shared: LastValue.
  { name: 'endpoint_no_pod', type: 'gauge', seedType: 'LastValue', help: 'Endpoints without an associated pod.', labelNames: [], programs: SHARED },
  { name: 'mesh_build', type: 'gauge', seedType: 'LastValue', help: 'Mesh component build information (1 per running component and tag).', labelNames: ['component', 'tag'], programs: SHARED },
  { name: 'meshd_managed_clusters', type: 'gauge', seedType: 'LastValue', help: 'Number of clusters managed by meshd, by cluster type (local, remote).', labelNames: ['cluster_type'], programs: SHARED },
  { name: 'pilot_conflict_inbound_listener', type: 'gauge', seedType: 'LastValue', help: 'Number of conflicting inbound listeners.', labelNames: [], programs: SHARED },
  { name: 'pilot_conflict_outbound_listener_http_over_current_tcp', type: 'gauge', seedType: 'LastValue', help: 'Number of conflicting HTTP listeners with a current TCP listener.', labelNames: [], programs: SHARED },
  { name: 'pilot_conflict_outbound_listener_tcp_over_current_http', type: 'gauge', seedType: 'LastValue', help: 'Number of conflicting TCP listeners with a current HTTP listener.', labelNames: [], programs: SHARED },
  { name: 'pilot_conflict_outbound_listener_tcp_over_current_tcp', type: 'gauge', seedType: 'LastValue', help: 'Number of conflicting TCP listeners with a current TCP listener.', labelNames: [], programs: SHARED },
  { name: 'pilot_destrule_subsets', type: 'gauge', seedType: 'LastValue', help: 'Duplicate subsets across destination rules for the same host.', labelNames: [], programs: SHARED },
  { name: 'pilot_duplicate_proxy_clusters', type: 'gauge', seedType: 'LastValue', help: 'Duplicate proxy clusters caused by service entries with the same host name.', labelNames: [], programs: SHARED },
  { name: 'pilot_eds_no_instances', type: 'gauge', seedType: 'LastValue', help: 'Number of clusters without instances.', labelNames: [], programs: SHARED },
  { name: 'pilot_endpoint_not_ready', type: 'gauge', seedType: 'LastValue', help: 'Endpoints found in an unready state.', labelNames: [], programs: SHARED },
  { name: 'pilot_orch_endpoints_pending_pod', type: 'gauge', seedType: 'LastValue', help: 'Number of endpoints that do not currently have any corresponding pod.', labelNames: [], programs: SHARED },
  { name: 'pilot_no_ip', type: 'gauge', seedType: 'LastValue', help: 'Pods not found in the endpoint table, possibly invalid.', labelNames: [], programs: SHARED },
  { name: 'pilot_services', type: 'gauge', seedType: 'LastValue', help: 'Total services known to the daemon.', labelNames: [], programs: SHARED },
  { name: 'pilot_virt_services', type: 'gauge', seedType: 'LastValue', help: 'Total virtual services known to the daemon.', labelNames: [], programs: SHARED },
  { name: 'pilot_vservice_dup_domain', type: 'gauge', seedType: 'LastValue', help: 'Virtual services with duplicate domains.', labelNames: [], programs: SHARED },
  { name: 'pilot_xds', type: 'gauge', seedType: 'LastValue', help: 'Number of proxies connected over xDS, by proxy version.', labelNames: ['version'], programs: SHARED },
  { name: 'pilot_xds_cds_reject', type: 'gauge', seedType: 'LastValue', help: 'Proxies that rejected CDS config.', labelNames: [], programs: SHARED },
  { name: 'pilot_xds_eds_reject', type: 'gauge', seedType: 'LastValue', help: 'Proxies that rejected EDS config.', labelNames: [], programs: SHARED },
  { name: 'pilot_xds_lds_reject', type: 'gauge', seedType: 'LastValue', help: 'Proxies that rejected LDS config.', labelNames: [], programs: SHARED },
  { name: 'pilot_xds_rds_reject', type: 'gauge', seedType: 'LastValue', help: 'Proxies that rejected RDS config.', labelNames: [], programs: SHARED },
  { name: 'startup_duration_seconds', type: 'gauge', seedType: 'LastValue', help: 'The time from the process starting to being marked ready, in seconds.', labelNames: [], programs: SHARED },
  { name: 'xds_cache_size', type: 'gauge', seedType: 'LastValue', help: 'Current size of the xDS cache.', labelNames: [], programs: SHARED },
  // Shared: Distribution.
  { name: 'pilot_proxy_convergence_time', type: 'histogram', seedType: 'Distribution', help: 'Delay in seconds between a config change and a proxy receiving all required configuration.', labelNames: [], programs: SHARED, unit: 'seconds', buckets: PROXY_SECONDS },
  { name: 'pilot_proxy_queue_time', type: 'histogram', seedType: 'Distribution', help: 'Time in seconds a proxy is in the push queue before being dequeued.', labelNames: [], programs: SHARED, unit: 'seconds', buckets: PROXY_SECONDS },
  { name: 'pilot_xds_config_size_bytes', type: 'histogram', seedType: 'Distribution', help: 'Distribution of configuration sizes pushed to clients, in bytes, by xDS type.', labelNames: ['type'], programs: SHARED, unit: 'bytes', buckets: CONFIG_BYTES },
  { name: 'pilot_xds_push_time', type: 'histogram', seedType: 'Distribution', help: 'Total time in seconds the daemon takes to push lds, rds, cds and eds, by type.', labelNames: ['type'], programs: SHARED, unit: 'seconds', buckets: PUSH_SECONDS },
  { name: 'pilot_xds_send_time', type: 'histogram', seedType: 'Distribution', help: 'Total time in seconds the daemon takes to send generated configuration.', labelNames: [], programs: SHARED, unit: 'seconds', buckets: SEND_SECONDS },

  // Only the daemon: Sum.
  { name: 'ca_server_authentication_failure_count', type: 'counter', seedType: 'Sum', help: 'The number of CA authentication failures.', labelNames: [], programs: DAEMON },
  { name: 'ca_server_csr_count', type: 'counter', seedType: 'Sum', help: 'The number of CSRs received by the CA server.', labelNames: [], programs: DAEMON },
  { name: 'ca_server_csr_parsing_err_count', type: 'counter', seedType: 'Sum', help: 'The number of errors parsing a CSR.', labelNames: [], programs: DAEMON },
  { name: 'ca_server_csr_sign_err_count', type: 'counter', seedType: 'Sum', help: 'The number of errors signing a CSR, by CA error type.', labelNames: ['error'], programs: DAEMON },
  { name: 'ca_server_id_extraction_err_count', type: 'counter', seedType: 'Sum', help: 'The number of errors extracting the identity from a CSR.', labelNames: [], programs: DAEMON },
  { name: 'ca_server_success_cert_issuance_count', type: 'counter', seedType: 'Sum', help: 'The number of certificate issuances that succeeded.', labelNames: [], programs: DAEMON },
  { name: 'galley_validation_failed', type: 'counter', seedType: 'Sum', help: 'Resource validation failed, by resource and reason.', labelNames: ['group', 'version', 'resource', 'reason'], programs: DAEMON },
  { name: 'galley_validation_http_error', type: 'counter', seedType: 'Sum', help: 'Resource validation HTTP serve errors, by status code.', labelNames: ['status'], programs: DAEMON },
  { name: 'galley_validation_passed', type: 'counter', seedType: 'Sum', help: 'Resource is valid, by resource.', labelNames: ['group', 'version', 'resource'], programs: DAEMON },
  { name: 'sidecar_injection_failure_total', type: 'counter', seedType: 'Sum', help: 'Total number of failed sidecar injection requests.', labelNames: [], programs: DAEMON },
  { name: 'sidecar_injection_requests_total', type: 'counter', seedType: 'Sum', help: 'Total number of sidecar injection requests.', labelNames: [], programs: DAEMON },
  { name: 'sidecar_injection_skip_total', type: 'counter', seedType: 'Sum', help: 'Total number of skipped sidecar injection requests.', labelNames: [], programs: DAEMON },
  { name: 'sidecar_injection_success_total', type: 'counter', seedType: 'Sum', help: 'Total number of successful sidecar injection requests.', labelNames: [], programs: DAEMON },
  // Only the daemon: LastValue.
  { name: 'ca_server_cert_chain_expiry_timestamp', type: 'gauge', seedType: 'LastValue', help: 'The unix timestamp, in seconds, when the CA certificate chain expires; negative means expired.', labelNames: [], programs: DAEMON },
  { name: 'ca_server_root_cert_expiry_timestamp', type: 'gauge', seedType: 'LastValue', help: 'The unix timestamp, in seconds, when the root certificate expires; negative means expired.', labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_state_type_instances_total', type: 'gauge', seedType: 'LastValue', help: 'The number of config instances per collection.', labelNames: ['collection'], programs: DAEMON },
  // Only the daemon: Count.
  { name: 'galley_runtime_processor_events_processed_total', type: 'counter', seedType: 'Count', help: 'The number of config events processed.', labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_processor_snapshots_published_total', type: 'counter', seedType: 'Count', help: 'The number of config snapshots published.', labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_strategy_on_change_total', type: 'counter', seedType: 'Count', help: "The number of times the debounce strategy's on-change was called.", labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_strategy_timer_max_time_reached_total', type: 'counter', seedType: 'Count', help: 'The number of times the debounce maximum time was reached.', labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_strategy_timer_quiesce_reached_total', type: 'counter', seedType: 'Count', help: 'The number of times the debounce quiet period was reached.', labelNames: [], programs: DAEMON },
  { name: 'galley_runtime_strategy_timer_resets_total', type: 'counter', seedType: 'Count', help: 'The number of times the debounce timer was reset.', labelNames: [], programs: DAEMON },
  { name: 'galley_source_orch_dynamic_converter_failure_total', type: 'counter', seedType: 'Count', help: 'The number of times the orchestrator source failed to convert a resource.', labelNames: ['apiVersion', 'group', 'kind'], programs: DAEMON },
  { name: 'galley_source_orch_dynamic_converter_success_total', type: 'counter', seedType: 'Count', help: 'The number of times the orchestrator source converted a resource.', labelNames: ['apiVersion', 'group', 'kind'], programs: DAEMON },
  { name: 'galley_source_orch_event_error_total', type: 'counter', seedType: 'Count', help: 'The number of times the orchestrator source failed to handle an event.', labelNames: [], programs: DAEMON },
  { name: 'galley_source_orch_event_success_total', type: 'counter', seedType: 'Count', help: 'The number of times the orchestrator source handled an event.', labelNames: [], programs: DAEMON },
  // Only the daemon: Distribution.
  { name: 'galley_runtime_processor_event_span_duration_milliseconds', type: 'histogram', seedType: 'Distribution', help: 'The duration between incoming config events, in milliseconds.', labelNames: [], programs: DAEMON, unit: 'milliseconds', buckets: SPAN_MILLISECONDS },
  { name: 'galley_runtime_processor_snapshot_events_total', type: 'histogram', seedType: 'Distribution', help: 'The number of config events per published snapshot.', labelNames: [], programs: DAEMON, unit: 'count', buckets: EVENTS_PER_SNAPSHOT },
  { name: 'galley_runtime_processor_snapshot_lifetime_duration_milliseconds', type: 'histogram', seedType: 'Distribution', help: 'The lifetime of each config snapshot, in milliseconds.', labelNames: [], programs: DAEMON, unit: 'milliseconds', buckets: SPAN_MILLISECONDS },

  // Only the agent: Sum.
  { name: 'proxy_connection_terminations', type: 'counter', seedType: 'Sum', help: 'The total number of connection errors from the proxy, by type (cancelled, error).', labelNames: ['type'], programs: AGENT },
  { name: 'meshd_connection_failures', type: 'counter', seedType: 'Sum', help: 'The total number of connection failures to meshd.', labelNames: [], programs: AGENT },
  { name: 'meshd_connection_terminations', type: 'counter', seedType: 'Sum', help: 'The total number of connection errors to meshd, by type (cancelled, error).', labelNames: ['type'], programs: AGENT },
  { name: 'num_failed_outgoing_requests', type: 'counter', seedType: 'Sum', help: 'Number of failed outgoing requests (to a token exchange server, the CA, ...).', labelNames: ['request_type'], programs: AGENT },
  { name: 'num_file_secret_failures_total', type: 'counter', seedType: 'Sum', help: 'Number of times secret generation failed for files.', labelNames: [], programs: AGENT },
  { name: 'num_file_watcher_failures_total', type: 'counter', seedType: 'Sum', help: 'Number of times the file watcher failed to add watchers.', labelNames: [], programs: AGENT },
  { name: 'num_outgoing_requests', type: 'counter', seedType: 'Sum', help: 'Number of total outgoing requests (to a token exchange server, the CA, ...).', labelNames: ['request_type'], programs: AGENT },
  { name: 'outgoing_latency', type: 'counter', seedType: 'Sum', help: 'The summed latency of outgoing requests (to a token exchange server, the CA, ...), in milliseconds.', labelNames: ['request_type'], programs: AGENT, unit: 'milliseconds' },
  { name: 'total_active_connections', type: 'counter', seedType: 'Sum', help: 'The total number of SDS connections opened.', labelNames: [], programs: AGENT },
  { name: 'total_push_errors', type: 'counter', seedType: 'Sum', help: 'The total number of failed SDS pushes.', labelNames: [], programs: AGENT },
  { name: 'total_pushes', type: 'counter', seedType: 'Sum', help: 'The total number of SDS pushes.', labelNames: [], programs: AGENT },
  { name: 'total_secret_update_failures', type: 'counter', seedType: 'Sum', help: 'The total number of dynamic secret update failures reported by the proxy.', labelNames: [], programs: AGENT },
  { name: 'total_stale_connections', type: 'counter', seedType: 'Sum', help: 'The total number of stale SDS connections.', labelNames: [], programs: AGENT },
  { name: 'wasm_cache_lookup_count', type: 'counter', seedType: 'Sum', help: 'Number of Wasm remote fetch cache lookups, by hit.', labelNames: ['hit'], programs: AGENT },
  { name: 'wasm_config_conversion_count', type: 'counter', seedType: 'Sum', help: 'Number of Wasm config conversions, by result.', labelNames: ['result'], programs: AGENT },
  { name: 'wasm_remote_fetch_count', type: 'counter', seedType: 'Sum', help: 'Number of Wasm remote fetches, by result (success, download failure, checksum mismatch).', labelNames: ['result'], programs: AGENT },
  // Only the agent, beyond the seed: the DNS proxy's counts, as the reference's agent exports them.
  { name: 'dns_requests_total', type: 'counter', seedType: 'Sum', help: 'Total number of DNS requests.', labelNames: [], programs: AGENT, beyondSeed: true },
  { name: 'dns_upstream_requests_total', type: 'counter', seedType: 'Sum', help: 'Total number of DNS requests forwarded to upstream.', labelNames: [], programs: AGENT, beyondSeed: true },
  { name: 'dns_upstream_failures_total', type: 'counter', seedType: 'Sum', help: 'Total number of DNS requests that no upstream answered (answered SERVFAIL).', labelNames: [], programs: AGENT, beyondSeed: true },
  { name: 'dns_upstream_request_duration_seconds', type: 'histogram', seedType: 'Distribution', help: 'Total time in seconds the agent takes to get a DNS response from upstream.', labelNames: [], programs: AGENT, unit: 'seconds', buckets: DNS_SECONDS, beyondSeed: true },
  // Only the agent: LastValue.
  { name: 'wasm_cache_entries', type: 'gauge', seedType: 'LastValue', help: 'Number of Wasm remote fetch cache entries.', labelNames: [], programs: AGENT },
  // Only the agent: Distribution.
  { name: 'wasm_config_conversion_duration', type: 'histogram', seedType: 'Distribution', help: 'Time in milliseconds the agent spends converting a remote load in Wasm config.', labelNames: [], programs: AGENT, unit: 'milliseconds', buckets: CONVERSION_MILLISECONDS },

  // The operator (meshctl): Sum.
  { name: 'cache_flush_total', type: 'counter', seedType: 'Sum', help: 'Number of times the operator cache was flushed.', labelNames: [], programs: OPERATOR },
  { name: 'cr_deletion_total', type: 'counter', seedType: 'Sum', help: 'Number of operator custom resources deleted.', labelNames: [], programs: OPERATOR },
  { name: 'cr_merge_failure_total', type: 'counter', seedType: 'Sum', help: 'Number of operator custom resource merge failures, by error type.', labelNames: ['error_type'], programs: OPERATOR },
  { name: 'cr_validation_error_total', type: 'counter', seedType: 'Sum', help: 'Number of operator custom resource validation failures.', labelNames: [], programs: OPERATOR },
  { name: 'get_cr_error_total', type: 'counter', seedType: 'Sum', help: 'Number of times fetching the operator custom resource from the API server failed, by reason.', labelNames: ['reason'], programs: OPERATOR },
  { name: 'legacy_path_translation_total', type: 'counter', seedType: 'Sum', help: 'Number of times a legacy API path was translated.', labelNames: [], programs: OPERATOR },
  { name: 'manifest_patch_error_total', type: 'counter', seedType: 'Sum', help: 'Number of times manifest patch overlays failed.', labelNames: [], programs: OPERATOR },
  { name: 'manifest_render_error_total', type: 'counter', seedType: 'Sum', help: 'Number of errors rendering an output manifest, by component and render error.', labelNames: ['component', 'render_error'], programs: OPERATOR },
  { name: 'render_manifest_total', type: 'counter', seedType: 'Sum', help: 'Number of component manifests rendered, by component.', labelNames: ['component'], programs: OPERATOR },
  { name: 'resource_creation_total', type: 'counter', seedType: 'Sum', help: 'Number of resources created by the operator, by kind.', labelNames: ['kind'], programs: OPERATOR },
  { name: 'resource_deletion_total', type: 'counter', seedType: 'Sum', help: 'Number of resources deleted by the operator, by kind.', labelNames: ['kind'], programs: OPERATOR },
  { name: 'resource_prune_total', type: 'counter', seedType: 'Sum', help: 'Number of resources pruned by the operator, by kind.', labelNames: ['kind'], programs: OPERATOR },
  { name: 'resource_update_total', type: 'counter', seedType: 'Sum', help: 'Number of resources updated by the operator, by kind.', labelNames: ['kind'], programs: OPERATOR },
  // The operator: LastValue.
  { name: 'owned_resource_total', type: 'gauge', seedType: 'LastValue', help: 'Number of resources currently owned by the operator, by kind.', labelNames: ['kind'], programs: OPERATOR },
  { name: 'version', type: 'gauge', seedType: 'LastValue', help: 'Version of the operator binary (1 per version).', labelNames: ['version'], programs: OPERATOR },
] as const satisfies readonly MetricSpec[];

type CatalogEntry = (typeof METRIC_CATALOG)[number];

/** The entries a program registers (any of them, when `P` is a union). */
type EntryIn<E, P extends Program> = E extends { programs: readonly (infer Q)[] } ? (P extends Q ? E : never) : never;

export type MetricName = CatalogEntry['name'];
export type CounterName<P extends Program = Program> = Extract<EntryIn<CatalogEntry, P>, { type: 'counter' }>['name'];
export type GaugeName<P extends Program = Program> = Extract<EntryIn<CatalogEntry, P>, { type: 'gauge' }>['name'];
export type HistogramName<P extends Program = Program> = Extract<EntryIn<CatalogEntry, P>, { type: 'histogram' }>['name'];
/** The label names of one metric, `never` when it has none. */
export type LabelNameOf<N extends MetricName> = Extract<CatalogEntry, { name: N }>['labelNames'][number];

/** The catalogue entries one program registers. */
export function metricsFor(program: Program): MetricSpec[] {
  return METRIC_CATALOG.filter((spec) => (spec.programs as readonly Program[]).includes(program));
}
