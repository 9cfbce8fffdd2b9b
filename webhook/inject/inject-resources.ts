import { parseAllDocuments, stringify } from 'yaml';
import { isPlainObject } from '../../kube-patch/index.js';
import type { Injector, InjectParams } from './injector.js';
import { readInjectionStatus } from './injection-status.js';
import { PROXY_CONTAINER } from '../../names/index.js';
import { objectList, type JsonObject, type Pod } from './pod.js';
import type { WorkloadMeta } from './workload-meta.js';

/** What the pod template of a resource became: injected, or left alone with a message why. */
export type PodTemplateResult = { readonly injected: Pod } | { readonly skipped: string };

/** Injects one pod template; `owner` is the resource that holds it. */
export type InjectPodTemplate = (template: Pod, owner: WorkloadMeta) => PodTemplateResult;

export interface InjectedResources {
  /** Every document in order, each followed by `---`. */
  readonly text: string;
  /** The skip messages (`===> Skipping injection because …`), for stderr. */
  readonly warnings: readonly string[];
}

/** Where each workload kind keeps its pod template. */
const TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
  Pod: [],
  Deployment: ['spec', 'template'],
  StatefulSet: ['spec', 'template'],
  DaemonSet: ['spec', 'template'],
  ReplicaSet: ['spec', 'template'],
  Job: ['spec', 'template'],
  ReplicationController: ['spec', 'template'],
  DeploymentConfig: ['spec', 'template'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template'],
};

/**
 * `meshctl kube-inject`: the pod templates of a multi-document YAML stream injected in place (the
 * items of a `List` too); other kinds pass through unchanged.
 */
export function injectResources(yamlText: string, injectTemplate: InjectPodTemplate): InjectedResources {
  const warnings: string[] = [];
  const out: string[] = [];
  for (const document of parseAllDocuments(yamlText)) {
    if (document.errors.length > 0) throw document.errors[0];
    const resource: unknown = document.toJS();
    if (resource === null || resource === undefined) continue;
    const asWritten = yamlText
      .slice(document.range[0], document.range[2])
      .replace(/^---[^\n]*\n/, '')
      .trim();
    if (!isPlainObject(resource)) {
      out.push(asWritten);
      continue;
    }
    const changed = injectResource(resource, injectTemplate, warnings);
    out.push(changed ? stringify(resource, { lineWidth: 0 }) : asWritten);
  }
  return { text: out.map((doc) => `${doc.endsWith('\n') ? doc : `${doc}\n`}---\n`).join(''), warnings };
}

function injectResource(resource: JsonObject, injectTemplate: InjectPodTemplate, warnings: string[]): boolean {
  const kind = String(resource['kind'] ?? '');
  if (kind === 'List') {
    let changed = false;
    for (const item of objectList(resource, 'items')) changed = injectResource(item, injectTemplate, warnings) || changed;
    return changed;
  }
  const path = TEMPLATE_PATHS[kind];
  if (path === undefined) return false;
  const holder = path
    .slice(0, -1)
    .reduce<JsonObject | undefined>((node, field) => (isPlainObject(node?.[field]) ? (node[field] as JsonObject) : undefined), resource);
  const field = path[path.length - 1];
  const template = field === undefined ? resource : holder?.[field];
  if (!isPlainObject(template)) return false;
  const metadata = (resource['metadata'] ?? {}) as JsonObject;
  const owner: WorkloadMeta = {
    name: String(metadata['name'] ?? ''),
    namespace: String(metadata['namespace'] ?? ''),
    kind,
    apiVersion: String(resource['apiVersion'] ?? ''),
  };
  const result = injectTemplate(template, owner);
  if ('skipped' in result) {
    warnings.push(result.skipped);
    return false;
  }
  if (field === undefined || holder === undefined) {
    for (const key of Object.keys(resource)) delete resource[key];
    Object.assign(resource, result.injected);
  } else {
    holder[field] = result.injected;
  }
  return true;
}

/**
 * The kube-inject decision and injection for one pod template with the reference's skip messages:
 * host networking, an already injected pod, a disabled pod. `base` carries the mesh config and
 * the rest; the template's namespace is the owner's (`default` when it has none).
 */
export function kubeInjectTemplate(injector: Injector, base: Omit<InjectParams, 'pod' | 'namespace' | 'workload'>): InjectPodTemplate {
  return (template, owner) => {
    const fullName = owner.namespace === '' ? owner.name : `${owner.namespace}/${owner.name}`;
    const spec = (template['spec'] ?? {}) as JsonObject;
    if (spec['hostNetwork'] === true) return { skipped: `===> Skipping injection because "${fullName}" has host networking enabled\n` };
    const containers = objectList(spec, 'containers');
    if (containers.length > 1 && containers.some((c) => c['name'] === PROXY_CONTAINER) && readInjectionStatus(template) !== undefined) {
      return { skipped: `===> Skipping injection because "${fullName}" has injected "${PROXY_CONTAINER}" sidecar already\n` };
    }
    const namespace = owner.namespace === '' ? 'default' : owner.namespace;
    if (!injector.required(template, namespace).inject) return { skipped: `===> Skipping injection because "${fullName}" has sidecar injection disabled\n` };
    const workload = owner.kind === 'Pod' ? undefined : { ...owner, namespace };
    const injected = injector.inject({ ...base, pod: template, namespace, ...(workload ? { workload } : {}) });
    const metadata = template['metadata'] as JsonObject | undefined;
    if (metadata?.['namespace'] === undefined) delete (injected['metadata'] as JsonObject)['namespace'];
    return { injected };
  };
}
