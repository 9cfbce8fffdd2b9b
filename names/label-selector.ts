/**
 * The one Kubernetes label-selector matcher: `labelsMatch` for a bare `matchLabels` map (a
 * policy's workload selector, a Service's selector, a subset's labels), `selectorMatches` for a
 * whole metav1.LabelSelector (`matchLabels` and `matchExpressions`, as webhook configurations and
 * the injector config write it). An absent or empty selector matches every set of labels; a
 * caller for whom empty means "nothing" (a Service's selector) says so itself.
 */

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values?: readonly string[];
}

/** A metav1.LabelSelector as we write it (`neverInjectSelector`, `alwaysInjectSelector`). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** A selector as read from the API (client-node's V1LabelSelector): any operator string. */
export interface UncheckedLabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

type Labels = Readonly<Record<string, string>>;

/** Whether the labels hold every pair of `matchLabels`; absent or empty holds for every set of labels. */
export function labelsMatch(matchLabels: Labels | undefined, labels: Labels): boolean {
  for (const key in matchLabels) {
    if (labels[key] !== matchLabels[key]) return false;
  }
  return true;
}

/**
 * Whether the labels satisfy every term of the selector: its `matchLabels` and each of its
 * `matchExpressions`. An absent or empty selector matches everything; an expression with an
 * operator Kubernetes does not know matches nothing.
 */
export function selectorMatches(selector: UncheckedLabelSelector | undefined, labels: Labels): boolean {
  if (selector === undefined) return true;
  if (!labelsMatch(selector.matchLabels, labels)) return false;
  return (selector.matchExpressions ?? []).every((requirement) => requirementMatches(requirement, labels));
}

function requirementMatches(requirement: { readonly key: string; readonly operator: string; readonly values?: readonly string[] }, labels: Labels): boolean {
  const has = Object.hasOwn(labels, requirement.key);
  const value = labels[requirement.key];
  const values = requirement.values ?? [];
  switch (requirement.operator) {
    case 'In':
      return has && values.includes(value as string);
    case 'NotIn':
      return !has || !values.includes(value as string);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}
