import type { DestinationRule, LoadBalancerSettings, Subset, TrafficPolicy } from '../../crds/index.js';
import { labelsMatch } from '../../names/index.js';
import { type Service } from '../../controllers/index.js';
import type { Proxy } from '../proxy.js';
import type { IndexedDestinationRule, PushContext } from './push-context.js';

/**
 * The DestinationRule that applies to `service` for this proxy, as the reference picks it: a
 * rule in the proxy's namespace first, then the service's namespace, then the root namespace;
 * an exact host before a wildcard. A rule with a workload selector applies only to the proxies
 * of its namespace it selects.
 */
export function destinationRuleFor(push: PushContext, proxy: Proxy, service: Service): IndexedDestinationRule | undefined {
  const wildcards = push.wildcardDestinationRules.filter((entry) => entry.host === '*' || service.hostname.endsWith(entry.host.slice(1)));
  const candidates = [...(push.destinationRulesByHost.get(service.hostname) ?? []), ...wildcards].filter((entry) => appliesToProxy(entry, proxy));
  for (const namespace of [proxy.configNamespace, service.namespace, push.rootNamespace]) {
    const found = candidates.find((entry) => entry.namespace === namespace);
    if (found) return found;
  }
  return undefined;
}

function appliesToProxy(entry: IndexedDestinationRule, proxy: Proxy): boolean {
  const selector = entry.rule.spec.workloadSelector?.matchLabels;
  if (selector === undefined) return true;
  return entry.namespace === proxy.configNamespace && labelsMatch(selector, proxy.metadata.labels);
}

/** The subset of a rule by name. */
export function subsetOf(rule: DestinationRule | undefined, name: string): Subset | undefined {
  return rule?.spec.subsets?.find((subset) => subset.name === name);
}

/** Port-level settings replace the whole policy for their port, as the reference (no inheritance). */
function forPort(policy: TrafficPolicy | undefined, port: number): Omit<TrafficPolicy, 'portLevelSettings'> | undefined {
  const portLevel = policy?.portLevelSettings?.find((settings) => settings.port?.number === port);
  if (portLevel) {
    const { port: _port, ...rest } = portLevel;
    return rest;
  }
  return policy;
}

/** The load balancer settings for one port (and subset): the subset's own settings win over the rule's. */
export function loadBalancerFor(rule: DestinationRule | undefined, port: number, subset?: Subset): LoadBalancerSettings | undefined {
  const fromSubset = forPort(subset?.trafficPolicy, port)?.loadBalancer;
  return fromSubset ?? forPort(rule?.spec.trafficPolicy, port)?.loadBalancer;
}

/**
 * What an outbound resource of `hostname` depends on besides the push context: the DestinationRule
 * the proxy sees for it (none, or its namespace and name). Proxies that see the same rule share
 * the encoded resource.
 */
export function destinationRuleKey(push: PushContext, proxy: Proxy, hostname: string): string {
  const service = push.serviceByHost.get(hostname);
  if (!service) return '-';
  const rule = destinationRuleFor(push, proxy, service);
  return rule ? `${rule.namespace}/${rule.name}` : '-';
}
