import { isDns1123Label } from './dns-names.js';
import type { z } from 'zod';
import type { policyTargetReferenceSchema, workloadSelectorSchema } from './common-schemas.js';
import type { IssueSink, Path } from './validation-issue.js';

type WorkloadSelector = z.infer<typeof workloadSelectorSchema>;
type PolicyTargetReference = z.infer<typeof policyTargetReferenceSchema>;

const LABEL_VALUE_MAX = 63;

/** Label keys and values in a selector are matched exactly: no wildcards, no empty keys. */
export function checkSelectorLabels(sink: IssueSink, path: Path, labels: Readonly<Record<string, string>>): void {
  for (const [key, value] of Object.entries(labels)) {
    const at = [...path, key];
    if (key === '') sink.error(at, 'expected a non-empty label key');
    if (key.includes('*')) sink.error(at, `expected an exact label key without wildcards, got "${key}"`);
    if (value.includes('*')) sink.error(at, `expected an exact label value without wildcards, got "${value}"`);
    if (value.length > LABEL_VALUE_MAX) {
      sink.error(at, `expected a label value of at most ${LABEL_VALUE_MAX} characters, got ${value.length}`);
    }
  }
}

/** Whether a selector actually narrows the workloads (an empty one selects them all). */
export function hasSelectorLabels(selector: WorkloadSelector | undefined): boolean {
  return Object.keys(selector?.matchLabels ?? {}).length > 0;
}

export function checkWorkloadSelector(sink: IssueSink, path: Path, selector: WorkloadSelector | undefined): void {
  if (selector === undefined) return;
  checkSelectorLabels(sink, [...path, 'matchLabels'], selector.matchLabels ?? {});
  if (!hasSelectorLabels(selector)) {
    sink.warn(path, 'selector without matchLabels selects every workload in the namespace; add matchLabels or remove the selector');
  }
}

type TargetSelection = {
  selector?: WorkloadSelector | undefined;
  targetRef?: PolicyTargetReference | undefined;
  targetRefs?: readonly PolicyTargetReference[] | undefined;
};

const ALLOWED_TARGETS: readonly { group: string; kind: string }[] = [
  { group: '', kind: 'Service' },
  { group: 'networking.mesh.io', kind: 'ServiceEntry' },
  { group: 'gateway.networking.k8s.io', kind: 'Gateway' },
  { group: 'gateway.networking.k8s.io', kind: 'GatewayClass' },
];

function checkTargetRef(sink: IssueSink, path: Path, ref: PolicyTargetReference): void {
  const group = ref.group === 'core' ? '' : (ref.group ?? '');
  if (!ALLOWED_TARGETS.some((allowed) => allowed.group === group && allowed.kind === ref.kind)) {
    sink.error(
      path,
      `expected a reference to a Service (group ""), a ServiceEntry (group networking.mesh.io), or a Gateway or GatewayClass (group gateway.networking.k8s.io), got group "${group}" kind "${ref.kind}"`,
    );
  }
  if (ref.namespace !== undefined && ref.namespace !== '') {
    sink.error([...path, 'namespace'], 'cross-namespace references are not supported: expected namespace to be empty');
  }
}

/** selector, targetRef and targetRefs are three ways to pick what a policy applies to; only one may be used. */
export function checkTargetSelection(sink: IssueSink, specPath: Path, spec: TargetSelection): void {
  const used = [spec.selector !== undefined, spec.targetRef !== undefined, (spec.targetRefs ?? []).length > 0];
  if (used.filter(Boolean).length > 1) {
    sink.error(specPath, 'only one of selector, targetRef or targetRefs may be set');
  }
  checkWorkloadSelector(sink, [...specPath, 'selector'], spec.selector);
  if (spec.targetRef !== undefined) checkTargetRef(sink, [...specPath, 'targetRef'], spec.targetRef);
  (spec.targetRefs ?? []).forEach((ref, i) => checkTargetRef(sink, [...specPath, 'targetRefs', i], ref));
}

/**
 * exportTo entries are `.` (this namespace), `*` (every namespace) or namespace names, without
 * duplicates; `*` stands alone. A DestinationRule with a workloadSelector stays in its namespace;
 * a ServiceEntry may also say `~` (visible to no namespace, only to its own workloads' proxies).
 */
export function checkExportTo(
  sink: IssueSink,
  path: Path,
  exportTo: readonly string[] | undefined,
  namespace: string | undefined,
  hasWorkloadSelector = false,
  allowNone = false,
): void {
  if (exportTo === undefined || exportTo.length === 0) return;
  const seen = new Map<string, number>();
  exportTo.forEach((entry, i) => {
    const at = [...path, i];
    const key = entry === '.' && namespace !== undefined ? namespace : entry;
    const first = seen.get(key);
    if (first !== undefined) {
      sink.error(at, `duplicate exportTo entry "${entry}" (same as exportTo[${first}]): expected each namespace once`);
      return;
    }
    seen.set(key, i);
    if (entry === '~' && !allowNone) {
      sink.error(at, 'exportTo "~" (no namespace) is not allowed here: expected ".", "*" or a namespace name');
    } else if (entry !== '.' && entry !== '*' && entry !== '~' && !isDns1123Label(entry)) {
      sink.error(at, `expected ".", "*" or a namespace name (a DNS-1123 label), got "${entry}"`);
    }
  });
  if (exportTo.includes('*') && exportTo.length > 1) {
    sink.error(path, 'exportTo "*" already exports to every namespace: expected it as the only entry');
  }
  if (hasWorkloadSelector) {
    const local = exportTo.every((entry) => entry === '.' || (namespace !== undefined && entry === namespace));
    if (!local) {
      sink.error(path, 'a DestinationRule with a workloadSelector applies only in its own namespace: expected exportTo to be "."');
    }
  }
}

/** Why the path after `unix://` is not a socket: it must be absolute (or abstract, `@name`) and not a directory. */
export function unixSocketProblem(path: string): string | undefined {
  if (path.startsWith('@')) return undefined;
  return path.startsWith('/') && !path.endsWith('/') ? undefined : `expected an absolute socket file path after unix://, got "${path}"`;
}
