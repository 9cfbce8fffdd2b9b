import type { Analyzer } from '../analyzer.js';
import type { AnalysisContext } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { podsMatching, selectorString } from './kube-objects.js';

type SelectingKind = 'PeerAuthentication' | 'RequestAuthentication' | 'AuthorizationPolicy';

interface Selecting {
  readonly spec: { readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> }; readonly targetRefs?: readonly unknown[] };
}

function reportUnmatched(context: AnalysisContext, resources: readonly Resource<Selecting>[]): void {
  const pods = context.read('Pod');
  for (const resource of resources) {
    const labels = resource.object.spec.selector?.matchLabels;
    // Without labels a policy applies to its namespace (or the mesh), not to chosen workloads; targetRefs pick gateways.
    if (labels === undefined || Object.keys(labels).length === 0 || (resource.object.spec.targetRefs?.length ?? 0) > 0) continue;
    // A selector in the root namespace picks workloads of every namespace.
    const namespace = resource.namespace === context.rootNamespace ? undefined : resource.namespace;
    if (podsMatching(pods, namespace, labels).length > 0) continue;
    context.report('NoMatchingWorkloadsFound', resource, `No matching workloads for this resource with the following labels: ${selectorString(labels)}`);
  }
}

function selectorAnalyzer(kind: SelectingKind, area: string): Analyzer {
  return {
    name: `${area}.SelectorAnalyzer`,
    description: `Checks that the workload selector of each ${kind} matches some pod`,
    inputs: [kind, 'Pod'],
    analyze: (context) => reportUnmatched(context, context.read(kind)),
  };
}

/** MSH0127: policies whose selector matches no pod of their namespace (of any namespace for the root namespace's). */
export const WORKLOAD_SELECTOR_ANALYZERS: readonly Analyzer[] = [
  selectorAnalyzer('PeerAuthentication', 'peerauthentication'),
  selectorAnalyzer('RequestAuthentication', 'requestauthentication'),
  selectorAnalyzer('AuthorizationPolicy', 'authorizationpolicy'),
];
