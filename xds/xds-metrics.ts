import type { MeshMetrics } from '../runtime/index.js';
import { metricType } from './envoy/type-urls.js';
import type { Proxy } from './proxy.js';
import type { PushCondition } from './push/push-findings.js';
import type { XdsCallbacks } from './xds-callbacks.js';

/** The xDS metrics of the daemon (pilot_xds*, pilot_push_triggers, pilot_proxy_*, xds_cache_*), recorded from the callbacks. */
export function buildMetricsCallbacks(metrics: MeshMetrics<'pilot-discovery'>, options: { readonly cacheStats: boolean }): XdsCallbacks {
  const seconds = (ms: number): number => Math.max(0, ms) / 1000;
  return {
    onStreamOpen: (con) => metrics.gauge('pilot_xds').inc({ version: versionLabel(con.proxy) }),
    onStreamClosed: (con) => metrics.gauge('pilot_xds').dec({ version: versionLabel(con.proxy) }),
    onStreamRequest(_con, typeUrl, event) {
      if (event === 'nack') metrics.counter('pilot_total_xds_rejects').inc({ type: metricType(typeUrl) });
      else if (event === 'stale') metrics.counter('pilot_xds_expired_nonce').inc({ type: metricType(typeUrl) });
    },
    onStreamResponse(_con, typeUrl, { bytes, durationMs }) {
      const type = metricType(typeUrl);
      metrics.counter('pilot_xds_pushes').inc({ type });
      metrics.histogram('pilot_xds_config_size_bytes').observe({ type }, bytes);
      metrics.histogram('pilot_xds_push_time').observe({ type }, durationMs / 1000);
    },
    onRejectingChange(typeUrl, delta) {
      switch (metricType(typeUrl)) {
        case 'cds':
          metrics.gauge('pilot_xds_cds_reject').inc(delta);
          break;
        case 'eds':
          metrics.gauge('pilot_xds_eds_reject').inc(delta);
          break;
        case 'lds':
          metrics.gauge('pilot_xds_lds_reject').inc(delta);
          break;
        case 'rds':
          metrics.gauge('pilot_xds_rds_reject').inc(delta);
          break;
      }
    },
    onConfigUpdate: () => metrics.counter('pilot_inbound_updates').inc({ type: 'config' }),
    onPush(request) {
      for (const [reason, count] of request.reasons) metrics.counter('pilot_push_triggers').inc({ type: reason }, count);
    },
    onPushContextError: () => metrics.counter('pilot_xds_push_context_errors').inc(),
    onPushDequeued: (_con, queuedMs) => metrics.histogram('pilot_proxy_queue_time').observe(seconds(queuedMs)),
    onPushDone: (_con, convergenceMs) => metrics.histogram('pilot_proxy_convergence_time').observe(seconds(convergenceMs)),
    onSendTimeout: () => metrics.counter('pilot_xds_write_timeout').inc(),
    onSendError: (_con, typeUrl) => metrics.counter('pilot_xds_pushes').inc({ type: `${metricType(typeUrl)}_senderr` }),
    onSendDone: (_con, _typeUrl, durationMs) => metrics.histogram('pilot_xds_send_time').observe(durationMs / 1000),
    onGeneratorError: () => metrics.counter('pilot_total_xds_internal_errors').inc(),
    onFinding: (condition, count) => metrics.gauge(FINDING_GAUGES[condition]).set(count),
    ...(options.cacheStats
      ? {
          onCacheRead: (result: 'hit' | 'miss') => metrics.counter('xds_cache_reads').inc({ type: result }),
          onCacheEvicted: (count: number) => metrics.counter('xds_cache_evictions').inc(count),
          onCacheSize: (entries: number) => metrics.gauge('xds_cache_size').set(entries),
        }
      : {}),
  };
}

/** The reference's gauge of each push condition. */
const FINDING_GAUGES = {
  'inbound-listener-conflict': 'pilot_conflict_inbound_listener',
  'outbound-http-over-tcp': 'pilot_conflict_outbound_listener_http_over_current_tcp',
  'outbound-tcp-over-http': 'pilot_conflict_outbound_listener_tcp_over_current_http',
  'outbound-tcp-over-tcp': 'pilot_conflict_outbound_listener_tcp_over_current_tcp',
  'duplicate-subset': 'pilot_destrule_subsets',
  'duplicate-cluster': 'pilot_duplicate_proxy_clusters',
  'cluster-without-instances': 'pilot_eds_no_instances',
  'proxy-endpoint-not-ready': 'pilot_endpoint_not_ready',
  'proxy-without-workload': 'pilot_no_ip',
  'endpoint-without-pod': 'endpoint_no_pod',
  'duplicate-domain': 'pilot_vservice_dup_domain',
} as const satisfies Record<PushCondition, string>;

function versionLabel(proxy: Proxy): string {
  return proxy.metadata.meshVersion ?? 'unknown';
}
