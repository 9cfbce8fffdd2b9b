import { labelsMatch } from '../../names/index.js';

interface SelectablePolicy {
  readonly metadata: { readonly namespace?: string | undefined };
  readonly spec: { readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> | undefined } | undefined };
}

/**
 * The policies that apply to a workload, as the reference selects RequestAuthentication and
 * AuthorizationPolicy: selector-less ones of the root namespace (mesh-wide) and of the
 * workload's namespace, and ones of its namespace whose selector matches its labels.
 */
export function policiesFor<P extends SelectablePolicy>(policies: readonly P[], rootNamespace: string, namespace: string, labels: Readonly<Record<string, string>>): P[] {
  return policies.filter((policy) => {
    const policyNamespace = policy.metadata.namespace ?? '';
    const selector = policy.spec.selector?.matchLabels;
    const hasSelector = selector !== undefined && Object.keys(selector).length > 0;
    if (!hasSelector) return policyNamespace === rootNamespace || policyNamespace === namespace;
    return policyNamespace === namespace && labelsMatch(selector, labels);
  });
}
