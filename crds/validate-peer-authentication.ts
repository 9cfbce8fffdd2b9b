import type { PeerAuthentication } from './peer-authentication-schema.js';
import type { ValidateOptions } from './validate-options.js';
import { checkWorkloadSelector, hasSelectorLabels } from './validate-shared.js';
import type { IssueSink } from './validation-issue.js';

const PORT_KEY = /^[0-9]+$/;

/** The checks that need nothing but the resource; `checkBoundPorts` adds the one that needs the cluster. */
export function validatePeerAuthentication(sink: IssueSink, resource: PeerAuthentication): void {
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
    sink.error(path, 'expected a selector with matchLabels alongside portLevelMtls: mesh-wide and namespace-wide policies cannot set port-level mTLS');
  }

  for (const key of entries) {
    if (portOfKey(key) === undefined) sink.error([...path, key], `expected a port number from 1 to 65535 as the key, got "${key}"`);
  }
}

/**
 * The check that needs the cluster: `portLevelMtls` entries on ports no service of the selected
 * workloads binds are flagged (warnings only). Kept apart so that the rest of the validation can
 * run without the cluster (on the config folder's parse threads); it runs last, as before.
 */
export function checkBoundPorts(sink: IssueSink, resource: PeerAuthentication, options: ValidateOptions): void {
  const { spec } = resource;
  if (spec.portLevelMtls === undefined || options.servicePortsForWorkload === undefined) return;
  const matchLabels = spec.selector?.matchLabels;
  if (matchLabels === undefined || !hasSelectorLabels(spec.selector)) return;
  const keys = Object.keys(spec.portLevelMtls);
  if (keys.length === 0) return;
  const bound = options.servicePortsForWorkload(resource.metadata.namespace, matchLabels);
  if (bound === undefined) return;
  for (const key of keys) {
    const port = portOfKey(key);
    if (port !== undefined && !bound.includes(port)) {
      sink.warn(
        ['spec', 'portLevelMtls', key],
        `port ${port} is not a target port of any service selecting these workloads; portLevelMtls only applies to ports bound to a service, so this entry is ignored`,
      );
    }
  }
}

function portOfKey(key: string): number | undefined {
  const port = PORT_KEY.test(key) ? Number(key) : NaN;
  return port >= 1 && port <= 65535 ? port : undefined;
}
