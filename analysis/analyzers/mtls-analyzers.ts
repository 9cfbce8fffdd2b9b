import type { DestinationRule, MtlsMode, PeerAuthentication } from '../../crds/index.js';
import type { Analyzer, AnalysisContext } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { fullHostName, hostCovers, servicesByHost } from './hosts.js';
import { labelsMatch } from '../../names/index.js';
import { labelsOf, serviceSelects, targetPortOn } from './kube-objects.js';

type ClientMode = 'DISABLE' | 'MESH_MUTUAL';

/** The client TLS modes a DestinationRule sets that can meet a peer authentication mode: top level and per subset. */
function clientModes(rule: DestinationRule): ClientMode[] {
  const modes = [rule.spec.trafficPolicy?.tls?.mode, ...(rule.spec.subsets ?? []).map((subset) => subset.trafficPolicy?.tls?.mode)];
  return [...new Set(modes.filter((mode): mode is ClientMode => mode === 'DISABLE' || mode === 'MESH_MUTUAL'))];
}

/** STRICT refuses the plain text of DISABLE; DISABLE cannot answer the mutual TLS of MESH_MUTUAL. */
function conflicts(client: ClientMode, server: MtlsMode): boolean {
  return (client === 'DISABLE' && server === 'STRICT') || (client === 'MESH_MUTUAL' && server === 'DISABLE');
}

function reportConflict(
  context: AnalysisContext,
  host: string,
  rule: Resource<DestinationRule>,
  client: ClientMode,
  policy: Resource<PeerAuthentication>,
  server: MtlsMode,
): void {
  const message = `A DestinationRule and Policy are in conflict with regards to mTLS for host ${host}. The DestinationRule "${rule.namespace}/${rule.name}" specifies that mTLS must be ${client === 'MESH_MUTUAL'} but the Policy object "${policy.namespace}/${policy.name}" specifies ${server}.`;
  context.report('MTLSPolicyConflict', rule, message);
  context.report('MTLSPolicyConflict', policy, message);
}

/** The namespace of `<name>.<namespace>.svc.<domainSuffix>`, or undefined for any other host. */
function serviceNamespace(host: string, domainSuffix: string): string | undefined {
  const suffix = `.svc.${domainSuffix}`;
  if (!host.endsWith(suffix) || host.includes('*')) return undefined;
  const parts = host.slice(0, -suffix.length).split('.');
  return parts.length === 2 ? parts[1] : undefined;
}

const isSet = (mode: MtlsMode | undefined): mode is MtlsMode => mode !== undefined && mode !== 'UNSET';
const hasSelector = (policy: Resource<PeerAuthentication>): boolean => Object.keys(policy.object.spec.selector?.matchLabels ?? {}).length > 0;

/**
 * MSH0113 at mesh and namespace level: a DestinationRule DISABLE for hosts of a namespace whose
 * peer authentication (the namespace's, else the root namespace's) is STRICT, or MESH_MUTUAL where
 * it is DISABLE. A wildcard host is checked against every namespace its pattern covers.
 */
export const mtlsAnalyzer: Analyzer = {
  name: 'auth.MTLSAnalyzer',
  description: 'Checks for mutual TLS conflicts between namespace or mesh-wide peer authentication and destination rules',
  inputs: ['PeerAuthentication', 'DestinationRule'],
  analyze(context) {
    const wide = context.read('PeerAuthentication').filter((policy) => !hasSelector(policy) && isSet(policy.object.spec.mtls?.mode));
    const meshPolicy = wide.find((policy) => policy.namespace === context.rootNamespace);
    const byNamespace = new Map(wide.filter((policy) => policy !== meshPolicy).map((policy) => [policy.namespace, policy]));
    const effective = (namespace: string): Resource<PeerAuthentication> | undefined => byNamespace.get(namespace) ?? meshPolicy;
    for (const rule of context.read('DestinationRule')) {
      const host = fullHostName(rule.object.spec.host, rule.namespace, context.domainSuffix);
      const exact = serviceNamespace(host, context.domainSuffix);
      const namespaces =
        exact !== undefined ? [exact] : [...byNamespace.keys()].filter((namespace) => hostCovers(host, `x.${namespace}.svc.${context.domainSuffix}`));
      const policies = new Set(namespaces.map(effective));
      if (exact === undefined && meshPolicy !== undefined && hostCovers(host, `x.y.svc.${context.domainSuffix}`)) policies.add(meshPolicy);
      for (const policy of policies) {
        if (policy === undefined) continue;
        const server = policy.object.spec.mtls?.mode as MtlsMode;
        for (const client of clientModes(rule.object)) {
          if (conflicts(client, server)) reportConflict(context, rule.object.spec.host, rule, client, policy, server);
        }
      }
    }
  },
};

/**
 * MSH0113 at workload level: a DestinationRule for a Service whose pods a selecting
 * PeerAuthentication sets (port by port with `portLevelMtls`) to a mode the rule's TLS cannot meet.
 */
export const workloadMtlsAnalyzer: Analyzer = {
  name: 'auth.WorkloadMTLSAnalyzer',
  description: 'Checks for mutual TLS conflicts between workload peer authentication and destination rules',
  inputs: ['PeerAuthentication', 'DestinationRule', 'Service', 'Pod'],
  analyze(context) {
    const services = servicesByHost(context.read('Service'), context.domainSuffix);
    const workloadPolicies = context.read('PeerAuthentication').filter(hasSelector);
    const pods = context.read('Pod');
    for (const rule of context.read('DestinationRule')) {
      const modes = clientModes(rule.object);
      const service = services.get(fullHostName(rule.object.spec.host, rule.namespace, context.domainSuffix));
      if (modes.length === 0 || service === undefined) continue;
      const found = new Map<Resource<PeerAuthentication>, Set<MtlsMode>>();
      for (const pod of pods.filter((p) => serviceSelects(service, p.namespace, labelsOf(p.object)))) {
        const policy = workloadPolicies.find((p) => p.namespace === pod.namespace && labelsMatch(p.object.spec.selector?.matchLabels, labelsOf(pod.object)));
        if (policy === undefined) continue;
        for (const port of service.object.spec?.ports ?? []) {
          const target = targetPortOn(port, pod.object.spec);
          const mode = (target !== undefined ? policy.object.spec.portLevelMtls?.[String(target)]?.mode : undefined) ?? policy.object.spec.mtls?.mode;
          if (isSet(mode)) found.set(policy, (found.get(policy) ?? new Set()).add(mode));
        }
      }
      for (const [policy, serverModes] of found) {
        for (const server of serverModes) {
          for (const client of modes) if (conflicts(client, server)) reportConflict(context, rule.object.spec.host, rule, client, policy, server);
        }
      }
    }
  },
};
