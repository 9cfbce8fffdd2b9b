import { describe, expect, it } from '@jest/globals';
import { newDataPlaneStats, processMemoryStats } from './data-plane-stats.js';

describe('data-plane stats', () => {
  it('serves the process memory as Envoy gauges after the counters', () => {
    const stats = newDataPlaneStats();
    stats.inc('http.downstream_rq_total', 2);
    stats.attach(processMemoryStats(() => ({ heapUsed: 1000, heapTotal: 4096 })));
    expect(stats.prometheus()).toBe(
      [
        '# TYPE envoy_http_downstream_rq_total counter',
        'envoy_http_downstream_rq_total 2',
        '# TYPE envoy_server_memory_allocated gauge',
        'envoy_server_memory_allocated 1000',
        '# TYPE envoy_server_memory_heap_size gauge',
        'envoy_server_memory_heap_size 4096',
        '',
      ].join('\n'),
    );
  });
});
