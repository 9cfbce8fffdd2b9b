import type { AuthorizationPolicy, AuthorizationRule } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { labelsOf, podsMatching, portProtocol, serviceSelects, targetPortOn } from './kube-objects.js';

const HTTP_ONLY_CONDITIONS = ['request.headers', 'request.auth.'];

/** The HTTP-only fields of a rule (request attributes a TCP connection does not carry), by name. */
function httpOnlyFields(rule: AuthorizationRule): string[] {
  const fields = new Set<string>();
  for (const to of rule.to ?? []) {
    const operation = to.operation ?? {};
    for (const field of ['hosts', 'notHosts', 'methods', 'notMethods', 'paths', 'notPaths'] as const) {
      if ((operation[field]?.length ?? 0) > 0) fields.add(field);
    }
  }
  for (const from of rule.from ?? []) {
    for (const field of ['requestPrincipals', 'notRequestPrincipals'] as const) {
      if ((from.source?.[field]?.length ?? 0) > 0) fields.add(field);
    }
  }
  for (const condition of rule.when ?? []) {
    if (HTTP_ONLY_CONDITIONS.some((prefix) => condition.key.startsWith(prefix))) fields.add(condition.key);
  }
  return [...fields].sort();
}

/** The ports a rule's `to` limits it to, or undefined when some `to` entry (or none) leaves every port. */
function rulePorts(rule: AuthorizationRule): Set<number> | undefined {
  const entries = rule.to ?? [];
  if (entries.length === 0 || entries.some((to) => (to.operation?.ports?.length ?? 0) === 0)) return undefined;
  return new Set(entries.flatMap((to) => (to.operation?.ports ?? []).map(Number)));
}

/**
 * MSH1005: a DENY rule with HTTP-only fields (hosts, methods, paths, requestPrincipals, request
 * headers, request.auth conditions) on a workload that serves a port declared TCP (`tcp-…`,
 * `mongo`, `appProtocol: tcp`…). On TCP filter chains the RBAC builder drops those fields from
 * DENY rules and keeps the rest, failing closed: the rule denies every connection its other fields
 * match, far more than it denies on HTTP.
 */
export const denyHttpOnTcpAnalyzer: Analyzer = {
  name: 'authorizationpolicy.DenyHttpOnTcpAnalyzer',
  description: 'Checks for DENY rules with HTTP-only fields applying to TCP ports, where they deny more than written',
  inputs: ['AuthorizationPolicy', 'Service', 'Pod'],
  analyze(context) {
    const services = context.read('Service');
    const pods = context.read('Pod');
    const tcpPortsOf = (policy: Resource<AuthorizationPolicy>): Map<number, string> => {
      const namespace = policy.namespace === context.rootNamespace ? undefined : policy.namespace;
      const ports = new Map<number, string>();
      for (const pod of podsMatching(pods, namespace, policy.object.spec.selector?.matchLabels)) {
        for (const service of services.filter((s) => serviceSelects(s, pod.namespace, labelsOf(pod.object)))) {
          for (const port of service.object.spec?.ports ?? []) {
            const target = targetPortOn(port, pod.object.spec);
            if (target !== undefined && portProtocol(port) === 'opaque' && (port.protocol ?? 'TCP') === 'TCP')
              ports.set(target, `${service.name}.${service.namespace}`);
          }
        }
      }
      return ports;
    };
    for (const resource of context.read('AuthorizationPolicy')) {
      if (resource.object.spec.action !== 'DENY' || (resource.object.spec.targetRefs?.length ?? 0) > 0) continue;
      const rules = resource.object.spec.rules ?? [];
      const tcpPorts = rules.some((rule) => httpOnlyFields(rule).length > 0) ? tcpPortsOf(resource) : new Map<number, string>();
      rules.forEach((rule, index) => {
        const fields = httpOnlyFields(rule);
        const limited = rulePorts(rule);
        const ports = [...tcpPorts].filter(([port]) => limited === undefined || limited.has(port)).sort(([a], [b]) => a - b);
        if (fields.length === 0 || ports.length === 0) return;
        const where = ports.map(([port, service]) => `${port} (Service ${service})`).join(', ');
        const message = `DENY rule ${index} uses HTTP-only fields [${fields.join(', ')}] but applies to TCP port ${where}: on TCP those fields are dropped and the rule denies every connection its other fields match`;
        context.report('DenyRuleHttpFieldsOnTcpPort', resource, message);
      });
    }
  },
};
