import type { PushCondition } from '../push/push-findings.js';
import { servicePortKey, type PushContext } from '../model/push-context.js';
import { labelsMatch } from '../../names/index.js';
import { outboundClusterName } from '../model/cluster-names.js';

type Finding = readonly [PushCondition, string];

/**
 * The conditions a push context holds whatever the proxy, as the reference finds them while
 * building it and its clusters: subsets defined twice across the DestinationRules of a host,
 * clusters two ServiceEntries of a host both make, EDS clusters with no ready endpoint, and
 * Service endpoints naming a pod not known yet.
 */
export function buildContextFindings(push: PushContext): Finding[] {
  return [...duplicateSubsets(push), ...duplicateClusters(push), ...clustersWithoutInstances(push), ...endpointsWithoutPod(push)];
}

/**
 * Rules of one host and namespace (without a workload selector) are merged by the reference, a
 * subset name already defined by an earlier rule being left out: the host is reported.
 */
function* duplicateSubsets(push: PushContext): Iterable<Finding> {
  for (const [host, rules] of push.destinationRulesByHost) {
    const seen = new Map<string, Set<string>>();
    for (const { namespace, rule } of rules) {
      if (rule.spec.workloadSelector !== undefined) continue;
      let names = seen.get(namespace);
      if (!names) seen.set(namespace, (names = new Set()));
      const duplicate = (rule.spec.subsets ?? []).some((subset) => names.has(subset.name));
      for (const subset of rule.spec.subsets ?? []) names.add(subset.name);
      if (duplicate) {
        yield ['duplicate-subset', host];
        break;
      }
    }
  }
}

function* duplicateClusters(push: PushContext): Iterable<Finding> {
  for (const { hostname, port } of push.duplicateServicePorts) yield ['duplicate-cluster', outboundClusterName(port, '', hostname)];
}

/**
 * The EDS clusters (a Kubernetes Service's ports, a STATIC ServiceEntry's) and their
 * DestinationRule subsets that no ready endpoint backs: what the reference's EDS builder reports
 * as a cluster without instances.
 */
function* clustersWithoutInstances(push: PushContext): Iterable<Finding> {
  for (const service of push.services) {
    const resolution = service.entry?.resolution ?? 'STATIC';
    if (resolution !== 'STATIC') continue;
    const subsets = (push.destinationRulesByHost.get(service.hostname) ?? []).flatMap(({ rule }) => rule.spec.subsets ?? []);
    for (const port of service.ports) {
      const ready = (push.endpointsByServicePort.get(servicePortKey(service.hostname, port.port)) ?? []).filter((endpoint) => endpoint.ready);
      if (ready.length === 0) yield ['cluster-without-instances', outboundClusterName(port.port, '', service.hostname)];
      for (const subset of subsets) {
        const labels = subset.labels ?? {};
        if (!ready.some((endpoint) => labelsMatch(labels, endpoint.labels))) {
          yield ['cluster-without-instances', outboundClusterName(port.port, subset.name, service.hostname)];
        }
      }
    }
  }
}

/** A Service whose EndpointSlices name a pod the registry does not know (yet): the host, once. */
function* endpointsWithoutPod(push: PushContext): Iterable<Finding> {
  for (const service of push.services) {
    if (service.entry) continue;
    const pending = service.ports.some((port) =>
      (push.endpointsByServicePort.get(servicePortKey(service.hostname, port.port)) ?? []).some((endpoint) => endpoint.podPending === true),
    );
    if (pending) yield ['endpoint-without-pod', service.hostname];
  }
}
