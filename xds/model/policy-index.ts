import { labelsMatch } from '../../names/index.js';

/** What selection reads of a workload policy (PeerAuthentication, RequestAuthentication, AuthorizationPolicy). */
export interface SelectablePolicy {
  readonly metadata: { readonly namespace?: string | undefined };
  readonly spec: { readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> | undefined } | undefined };
}

/** One kind of workload policy of a push, indexed by namespace once so that no proxy or port scans them all. */
export interface PolicyIndex<P extends SelectablePolicy> {
  /** Every policy, sorted by namespace, then name. */
  readonly all: readonly P[];
  /** The policies of the root namespace and of `namespace`, in `all`'s order: every one that can apply to a workload there. */
  candidates(namespace: string): readonly P[];
  /**
   * The policies that apply to a workload, as the reference selects RequestAuthentication and
   * AuthorizationPolicy: selector-less ones of the root namespace (mesh-wide) and of the
   * workload's namespace, and ones of its namespace whose selector matches its labels.
   * Answered once per namespace and label set: the proxies of a workload and their ports share it.
   */
  forWorkload(namespace: string, labels: Readonly<Record<string, string>>): readonly P[];
}

/** Indexes `policies`, which must be sorted by namespace, then name. */
export function newPolicyIndex<P extends SelectablePolicy>(policies: readonly P[], rootNamespace: string): PolicyIndex<P> {
  const byNamespace = new Map<string, P[]>();
  for (const policy of policies) {
    const namespace = policy.metadata.namespace ?? '';
    let list = byNamespace.get(namespace);
    if (!list) byNamespace.set(namespace, (list = []));
    list.push(policy);
  }
  const root = byNamespace.get(rootNamespace) ?? [];
  const candidatesOf = new Map<string, readonly P[]>();
  const selected = new Map<string, readonly P[]>();

  const candidates = (namespace: string): readonly P[] => {
    let found = candidatesOf.get(namespace);
    if (found) return found;
    const own = byNamespace.get(namespace) ?? [];
    found = Object.freeze(namespace === rootNamespace ? [...root] : rootNamespace < namespace ? [...root, ...own] : [...own, ...root]);
    candidatesOf.set(namespace, found);
    return found;
  };

  return {
    all: policies,
    candidates,
    forWorkload(namespace, labels) {
      const key = JSON.stringify(namespace) + labelKey(labels);
      let found = selected.get(key);
      if (!found) {
        found = Object.freeze(candidates(namespace).filter((policy) => appliesTo(policy, rootNamespace, namespace, labels)));
        selected.set(key, found);
      }
      return found;
    },
  };
}

function appliesTo(policy: SelectablePolicy, rootNamespace: string, namespace: string, labels: Readonly<Record<string, string>>): boolean {
  const policyNamespace = policy.metadata.namespace ?? '';
  const selector = policy.spec.selector?.matchLabels;
  const hasSelector = selector !== undefined && Object.keys(selector).length > 0;
  if (!hasSelector) return policyNamespace === rootNamespace || policyNamespace === namespace;
  return policyNamespace === namespace && labelsMatch(selector, labels);
}

/** The labels as one string, whatever their order; no two label sets share one. */
function labelKey(labels: Readonly<Record<string, string>>): string {
  return JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((name) => [name, labels[name]]),
  );
}
