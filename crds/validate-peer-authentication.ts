import type { PeerAuthentication } from './peer-authentication-schema.js';
import type { ValidateOptions } from './validate-options.js';
import { checkWorkloadSelector, hasSelectorLabels } from './validate-shared.js';
import type { IssueSink } from './validation-issue.js';

const PORT_KEY = /^[0-9]+$/;

export function validatePeerAuthentication(sink: IssueSink, resource: PeerAuthentication, options: ValidateOptions): void {
  const { spec } = resource;
  checkWorkloadSelector(sink, ['spec', 'selector'], spec.selector);
  if (spec.portLevelMtls === undefined) return;

  const path = ['spec', 'portLevelMtls'];
  const entries = Object.keys(spec.portLevelMtls);
  if (entries.length === 0) {
    sink.error(path, 'expected at least one port when portLevelMtls is set');
    return;
  }
  if (!hasSelectorLabels(spec.selector)) {
    sink.error(
      path,
      'expected a selector with matchLabels alongside portLevelMtls: mesh-wide and namespace-wide policies cannot set port-level mTLS',
    );
  }

  const ports: { key: string; port: number }[] = [];
  for (const key of entries) {
    const port = PORT_KEY.test(key) ? Number(key) : NaN;
    if (!(port >= 1 && port <= 65535)) {
      sink.error([...path, key], `expected a port number from 1 to 65535 as the key, got "${key}"`);
    } else {
      ports.push({ key, port });
    }
  }

  const matchLabels = spec.selector?.matchLabels;
  if (options.servicePortsForWorkload === undefined || matchLabels === undefined || !hasSelectorLabels(spec.selector)) return;
  const bound = options.servicePortsForWorkload(resource.metadata.namespace, matchLabels);
  if (bound === undefined) return;
  for (const { key, port } of ports) {
    if (!bound.includes(port)) {
      sink.warn(
        [...path, key],
        `port ${port} is not a target port of any service selecting these workloads; portLevelMtls only applies to ports bound to a service, so this entry is ignored`,
      );
    }
  }
}
