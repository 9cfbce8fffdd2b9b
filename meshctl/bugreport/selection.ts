import type { V1Pod } from '@kubernetes/client-node';
import { UsageError } from '../../runtime/index.js';

/**
 * One `--include`/`--exclude` spec, the reference's `ns1,ns2/dep1,dep2/pod1,pod2/l1=v1,l2=v2/a1=v1/c1,c2`:
 * namespaces, deployments, pods, labels, annotations, containers; each field a comma list of
 * globs (`*`, `?`), an empty or absent field matching anything. Fields are ANDed, items of one
 * field ORed, specs ORed.
 */
export interface SelectionSpec {
  readonly text: string;
  readonly namespaces: readonly string[];
  readonly deployments: readonly string[];
  readonly pods: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly containers: readonly string[];
}

/** What a spec is matched against: a pod, with its Deployment (from its ReplicaSet owner) if any. */
export interface PodView {
  readonly namespace: string;
  readonly name: string;
  readonly deployment: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly containers: readonly string[];
}

export function parseSelectionSpecs(flag: string, texts: readonly string[]): SelectionSpec[] {
  return texts.map((text) => parseSelectionSpec(flag, text));
}

export function parseSelectionSpec(flag: string, text: string): SelectionSpec {
  const fields = text.split('/');
  if (fields.length > 6)
    throw new UsageError(`${flag} "${text}": at most 6 fields (namespaces/deployments/pods/labels/annotations/containers)`, { exitCode: 64 });
  const list = (index: number): string[] =>
    (fields[index] ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  const pairs = (index: number, what: string): Record<string, string> => {
    const map: Record<string, string> = {};
    for (const item of list(index)) {
      const eq = item.indexOf('=');
      if (eq <= 0) throw new UsageError(`${flag} "${text}": ${what} "${item}" must read key=value`, { exitCode: 64 });
      map[item.slice(0, eq)] = item.slice(eq + 1);
    }
    return map;
  };
  return {
    text,
    namespaces: list(0),
    deployments: list(1),
    pods: list(2),
    labels: pairs(3, 'label'),
    annotations: pairs(4, 'annotation'),
    containers: list(5),
  };
}

/** A glob (`*` any run, `?` one character) matching the whole of `text`. */
export function globMatches(glob: string, text: string): boolean {
  return globRegExp(glob, true).test(text);
}

/** A glob matching part of `text` (a log line holds an error among other words). */
export function globFound(glob: string, text: string): boolean {
  return globRegExp(glob, false).test(text);
}

function globRegExp(glob: string, anchored: boolean): RegExp {
  const body = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(anchored ? `^${body}$` : body, 's');
}

const anyMatches = (globs: readonly string[], text: string): boolean => globs.length === 0 || globs.some((glob) => globMatches(glob, text));
const mapMatches = (wanted: Readonly<Record<string, string>>, have: Readonly<Record<string, string>>): boolean =>
  Object.entries(wanted).every(([key, value]) => have[key] !== undefined && globMatches(value, have[key]));

/** Whether a spec selects only whole namespaces (no other field given). */
export function isNamespaceOnly(spec: SelectionSpec): boolean {
  return (
    spec.deployments.length === 0 &&
    spec.pods.length === 0 &&
    Object.keys(spec.labels).length === 0 &&
    Object.keys(spec.annotations).length === 0 &&
    spec.containers.length === 0
  );
}

export function specMatchesPod(spec: SelectionSpec, pod: PodView): boolean {
  return (
    anyMatches(spec.namespaces, pod.namespace) &&
    anyMatches(spec.deployments, pod.deployment) &&
    (spec.deployments.length === 0 || pod.deployment !== '') &&
    anyMatches(spec.pods, pod.name) &&
    mapMatches(spec.labels, pod.labels) &&
    mapMatches(spec.annotations, pod.annotations) &&
    (spec.containers.length === 0 || pod.containers.some((container) => anyMatches(spec.containers, container)))
  );
}

/** The selection of one run: which namespaces' resources are dumped, which pods gathered. */
export interface Selection {
  /** A namespace's resources go in the archive: included by some spec, not excluded as a whole; the mesh namespace always. */
  namespace(name: string): boolean;
  /** A pod is gathered: its namespace selected, some include spec (if any) matching it, no exclude spec matching it. */
  pod(pod: PodView): boolean;
}

export function newSelection(include: readonly SelectionSpec[], exclude: readonly SelectionSpec[], meshNamespace: string): Selection {
  const namespace = (name: string): boolean => {
    if (name === meshNamespace) return true;
    if (exclude.some((spec) => isNamespaceOnly(spec) && anyMatches(spec.namespaces, name))) return false;
    return include.length === 0 || include.some((spec) => anyMatches(spec.namespaces, name));
  };
  return {
    namespace,
    pod: (pod) => {
      if (!namespace(pod.namespace)) return false;
      if (exclude.some((spec) => specMatchesPod(spec, pod))) return false;
      return include.length === 0 || include.some((spec) => specMatchesPod(spec, pod));
    },
  };
}

/** The view of a pod the specs match: its Deployment is its ReplicaSet owner's name less the template hash. */
export function podViewOf(pod: V1Pod): PodView {
  const owner = (pod.metadata?.ownerReferences ?? []).find((reference) => reference.kind === 'ReplicaSet');
  const hash = pod.metadata?.labels?.['pod-template-hash'];
  let deployment = '';
  if (owner) deployment = hash && owner.name.endsWith(`-${hash}`) ? owner.name.slice(0, -hash.length - 1) : owner.name.replace(/-[a-z0-9]{5,10}$/, '');
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    deployment,
    labels: pod.metadata?.labels ?? {},
    annotations: pod.metadata?.annotations ?? {},
    containers: (pod.spec?.containers ?? []).map((container) => container.name),
  };
}
