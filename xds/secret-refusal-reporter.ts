import type { Logger, MeshMetrics } from '../runtime/index.js';
import type { SecretRefusalEvent } from './generators/index.js';

/**
 * Logs every refused secret request (which proxy, which names, why) and counts it in
 * `pilot_sds_certificate_errors_total`, as the reference does for unauthorized certificates.
 */
export function newSecretRefusalReporter(log: Logger, metrics: MeshMetrics<'pilot-discovery'>): (event: SecretRefusalEvent) => void {
  const errors = metrics.counter('pilot_sds_certificate_errors_total');
  return ({ proxy, namespace, refused }) => {
    errors.inc({}, refused.length);
    log.warn(
      { proxy: proxy.id, proxyType: proxy.type, namespace, refused: refused.slice(0, 5).map((entry) => `${entry.resourceName} (${entry.reason})`) },
      'refused secrets the proxy may not read',
    );
  };
}
