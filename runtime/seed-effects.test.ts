import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { PROJECT_ROOT } from '../testing/run-bin.js';
import { METRIC_CATALOG } from './metrics-catalog.js';
import { SETTING_TABLES } from './settings.js';

// Issue 39's check: every setting of the registry (the seed's tables) is read by product code, and
// every metric of the catalogue is moved by it, except those listed below, each with the work that
// gives it an effect. "Read" and "moved" are approximated by the name appearing as a string literal
// in product code other than the registry and the catalogue themselves (settings are read with
// `settings.get('NAME')`, metrics moved with `metrics.counter('name')`, `.gauge`, `.histogram`).
// An exception whose name is now read or moved fails too: take it off the list.

const WAITING: readonly { readonly why: string; readonly settings?: readonly string[]; readonly metrics?: readonly string[] }[] = [
  {
    why: 'many clusters in one mesh (issue 37)',
    settings: [
      'ENABLE_MULTICLUSTER_HEADLESS',
      'EXTERNAL_MESHD',
      'PILOT_ENABLE_CROSS_CLUSTER_WORKLOAD_ENTRY',
      'PILOT_ENABLE_MCS_SERVICEEXPORT',
      'PILOT_REMOTE_CLUSTER_TIMEOUT',
      'USE_REMOTE_CERTS',
    ],
    metrics: ['remote_cluster_sync_timeouts_total', 'meshd_managed_clusters'],
  },
  { why: 'the Gateway API (issue 36)', settings: ['PILOT_ENABLED_SERVICE_APIS'] },
  { why: 'tracing (issue 39 item 1)', settings: ['PILOT_TRACE_SAMPLING', 'PILOT_ENABLE_MESH_TAGS'] },
  {
    why: 'Wasm extensions (issue 39 item 2)',
    settings: ['ENABLE_WASM_TELEMETRY', 'MESH_AGENT_ENABLE_WASM_REMOTE_LOAD_CONVERSION'],
    metrics: ['wasm_cache_lookup_count', 'wasm_config_conversion_count', 'wasm_remote_fetch_count', 'wasm_cache_entries', 'wasm_config_conversion_duration'],
  },
  { why: 'the token exchange service (issue 39 item 3)', metrics: ['num_outgoing_retries'] },
  {
    why: 'listener and filter settings (issue 39 item 4)',
    settings: [
      'PILOT_ENABLE_DESTINATION_RULE_INHERITANCE',
      'PILOT_ENABLE_FLOW_CONTROL',
      'PILOT_FLOW_CONTROL_TIMEOUT',
      'PILOT_ENABLE_LEGACY_AUTO_PASSTHROUGH',
      'PILOT_ENABLE_MONGO_FILTER',
      'PILOT_ENABLE_MYSQL_FILTER',
      'PILOT_ENABLE_REDIS_FILTER',
      'PILOT_ENABLE_PROTOCOL_SNIFFING_FOR_INBOUND',
      'PILOT_ENABLE_PROTOCOL_SNIFFING_FOR_OUTBOUND',
      'PILOT_INBOUND_PROTOCOL_DETECTION_TIMEOUT',
      'PILOT_ENABLE_VIRTUAL_SERVICE_DELEGATE',
      'PILOT_ENDPOINT_TELEMETRY_LABEL',
      'PILOT_PROXY_FILTER_STATS',
    ],
    metrics: ['pilot_xds_delayed_pushes_total', 'pilot_xds_delayed_push_timeouts_total'],
  },
  {
    why: "the model's health gauges and the ingestion metrics (issue 39 item 5)",
    metrics: [
      'galley_validation_config_load_error',
      'galley_validation_config_delete_error',
      'galley_runtime_state_type_instances_total',
      'galley_runtime_processor_events_processed_total',
      'galley_runtime_processor_snapshots_published_total',
      'galley_runtime_strategy_on_change_total',
      'galley_runtime_strategy_timer_max_time_reached_total',
      'galley_runtime_strategy_timer_quiesce_reached_total',
      'galley_runtime_strategy_timer_resets_total',
      'galley_source_orch_dynamic_converter_failure_total',
      'galley_source_orch_dynamic_converter_success_total',
      'galley_source_orch_event_error_total',
      'galley_source_orch_event_success_total',
      'galley_runtime_processor_event_span_duration_milliseconds',
      'galley_runtime_processor_snapshot_events_total',
      'galley_runtime_processor_snapshot_lifetime_duration_milliseconds',
      'scrapes_total',
      'scrape_failures_total',
      'proxy_connection_terminations',
      'num_file_secret_failures_total',
      'num_file_watcher_failures_total',
      'total_stale_connections',
      'cr_merge_failure_total',
      'get_cr_error_total',
      'legacy_path_translation_total',
      'manifest_patch_error_total',
    ],
  },
  {
    why: 'the remaining agent and platform settings (issue 39 item 6)',
    settings: [
      'CLOUD_METADATA',
      'MESH_BOOTSTRAP',
      'MESH_MULTIROOT_MESH',
      'MESH_METRICS_ANNOTATIONS',
      'ORCH_INGRESS_NS',
      'K_REVISION',
      'UNSAFE_PILOT_ENABLE_RUNTIME_ASSERTIONS',
      'PILOT_CERT_PROVIDER',
      'CA_PROVIDER',
      'PROXY_USER',
      'CLOUD_CLUSTER_URL',
      'XDS_AUTH_PROVIDER',
      'BOOTSTRAP_XDS_AGENT',
      'PROXY_CONFIG_XDS_AGENT',
      'ORCH_SERVICE_HOST',
    ],
  },
];

/** Folders that never ship: tests, benchmarks, the local mesh, scripts, build output. */
const NOT_PRODUCT = new Set(['node_modules', 'dist', 'var', 'bench', 'e2e', 'scripts', 'testing', 'deploy', 'docs']);

function productSources(dir: string, into: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith('.') || NOT_PRODUCT.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) productSources(path, into);
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) into.push(path);
  }
  return into;
}

const REGISTRIES = new Set([join(PROJECT_ROOT, 'runtime/settings.ts'), join(PROJECT_ROOT, 'runtime/metrics-catalog.ts')]);
const literals = new Set(
  productSources(PROJECT_ROOT)
    .filter((path) => !REGISTRIES.has(path))
    .flatMap((path) => [...readFileSync(path, 'utf8').matchAll(/'([A-Za-z][A-Za-z0-9_]*)'/g)].map((match) => match[1] ?? '')),
);

const settingNames = [...new Set(Object.values(SETTING_TABLES).flatMap((table) => Object.keys(table)))].sort();
const metricNames = [...new Set(METRIC_CATALOG.map((spec) => spec.name as string))].sort();
const waiting = (kind: 'settings' | 'metrics'): Set<string> => new Set(WAITING.flatMap((group) => group[kind] ?? []));

describe('every seed setting and metric has an effect in product code, or names the work that gives it one', () => {
  test.each([
    ['settings', settingNames],
    ['metrics', metricNames],
  ] as const)('%s', (kind, names) => {
    const excepted = waiting(kind);
    expect(names.filter((name) => !literals.has(name) && !excepted.has(name))).toEqual([]);
    // An exception for a name that is read or moved now, or that is not in the registry, is stale.
    expect([...excepted].filter((name) => literals.has(name) || !names.includes(name))).toEqual([]);
  });
});
