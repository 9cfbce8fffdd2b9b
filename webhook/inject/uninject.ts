import { clone } from '../../kube-patch/index.js';
import { restoreAppProbes } from './app-probes.js';
import { readInjectionStatus } from './injection-status.js';
import { ANNOTATIONS, LABELS, PROXY_CONTAINER } from '../../names/index.js';
import { ENV, MERGED_METRICS_PATH } from './proxy-env.js';
import { dropIfEmpty, envValue, metadataOf, objectList, specOf, stringMap, type JsonObject, type Pod } from './pod.js';
import { derivedCanonicalName, derivedCanonicalRevision, workloadMetaOf } from './workload-meta.js';

/** The fsGroup that legacy injection gives the pod so the proxy can read the projected token. */
export const LEGACY_FS_GROUP = 1337;

/**
 * Takes injection back out of a pod (`meshctl x orch-uninject`, and the first step of re-injecting
 * an injected pod): the containers, init containers, volumes and pull secrets the status
 * annotation lists, the app's probes and prometheus annotations as they were, the labels and
 * annotations injection added, and the legacy fsGroup. A pod without the status annotation is
 * returned as it is.
 */
export function uninjectPod(injected: Pod): Pod {
  const pod = clone(injected);
  const status = readInjectionStatus(pod);
  if (!status) return pod;
  const metadata = metadataOf(pod);
  const spec = specOf(pod);
  const annotations = stringMap(metadata['annotations']);
  const containers = objectList(spec, 'containers');
  const proxy = containers.find((container) => container['name'] === PROXY_CONTAINER);

  restoreAppProbes(containers);
  restorePrometheusAnnotations(metadata, proxy);
  const network = envValue(proxy, ENV.network);

  const overrides = parseOverrides(annotations[ANNOTATIONS.overrides]);
  spec['containers'] = [...without(containers, status.containers), ...overrides.containers];
  spec['initContainers'] = [...without(objectList(spec, 'initContainers'), status.initContainers), ...overrides.initContainers];
  spec['volumes'] = without(objectList(spec, 'volumes'), status.volumes);
  spec['imagePullSecrets'] = without(objectList(spec, 'imagePullSecrets'), status.imagePullSecrets);
  for (const field of ['initContainers', 'volumes', 'imagePullSecrets']) dropIfEmpty(spec, field);

  removeAddedLabels(pod, metadata, network, status.revision);
  removeAddedAnnotations(metadata, objectList(spec, 'containers'));

  const securityContext = spec['securityContext'] as JsonObject | undefined;
  if (securityContext?.['fsGroup'] === LEGACY_FS_GROUP) {
    delete securityContext['fsGroup'];
    dropIfEmpty(spec, 'securityContext');
  }
  return pod;
}

/**
 * The app's own pod, read-only: the pod itself when it was never injected (no copy: injection
 * copies only what it changes), else its uninjection.
 */
export function appPodOf(pod: Pod): Pod {
  return readInjectionStatus(pod) ? uninjectPod(pod) : pod;
}

function without(list: JsonObject[], names: readonly string[] | null): JsonObject[] {
  return list.filter((item) => !(names ?? []).includes(String(item['name'])));
}

function parseOverrides(text: string | undefined): { containers: JsonObject[]; initContainers: JsonObject[] } {
  if (text === undefined) return { containers: [], initContainers: [] };
  try {
    const parsed = JSON.parse(text) as JsonObject;
    return { containers: objectList(parsed, 'containers'), initContainers: objectList(parsed, 'initContainers') };
  } catch {
    return { containers: [], initContainers: [] };
  }
}

/** Undoes the prometheus merge: the app's own scrape annotations come back from MESH_PROMETHEUS_ANNOTATIONS. */
function restorePrometheusAnnotations(metadata: JsonObject, proxy: JsonObject | undefined): void {
  const annotations = (metadata['annotations'] ?? {}) as Record<string, string>;
  const merged = proxy !== undefined && annotations[ANNOTATIONS.prometheusPath] === MERGED_METRICS_PATH && annotations[ANNOTATIONS.prometheusScrape] === 'true';
  if (!merged) return;
  const saved = envValue(proxy, ENV.prometheusAnnotations);
  const original = saved === undefined ? {} : (JSON.parse(saved) as Record<string, string>);
  const fields = { scrape: ANNOTATIONS.prometheusScrape, path: ANNOTATIONS.prometheusPath, port: ANNOTATIONS.prometheusPort } as const;
  for (const [field, annotation] of Object.entries(fields)) {
    const value = original[field];
    if (value === undefined || value === '') delete annotations[annotation];
    else annotations[annotation] = value;
  }
}

function removeAddedLabels(pod: Pod, metadata: JsonObject, network: string | undefined, revision: string): void {
  const labels = metadata['labels'] as Record<string, string> | undefined;
  if (!labels) return;
  // The gateway template labels its pod with the revision when the pod has no revision label.
  if (labels[LABELS.revision] === revision) delete labels[LABELS.revision];
  if (labels[LABELS.tlsMode] === 'mesh') delete labels[LABELS.tlsMode];
  if (network !== undefined && labels[LABELS.network] === network) delete labels[LABELS.network];
  const namespace = typeof metadata['namespace'] === 'string' ? metadata['namespace'] : '';
  if (labels[LABELS.canonicalName] === derivedCanonicalName(labels, workloadMetaOf(pod, namespace))) delete labels[LABELS.canonicalName];
  if (labels[LABELS.canonicalRevision] === derivedCanonicalRevision(labels)) delete labels[LABELS.canonicalRevision];
  dropIfEmpty(metadata, 'labels');
}

function removeAddedAnnotations(metadata: JsonObject, containers: readonly JsonObject[]): void {
  const annotations = metadata['annotations'] as Record<string, string> | undefined;
  if (!annotations) return;
  delete annotations[ANNOTATIONS.status];
  delete annotations[ANNOTATIONS.overrides];
  const apps = containers.filter((container) => container['name'] !== PROXY_CONTAINER);
  const only = apps.length === 1 ? String(apps[0]?.['name']) : undefined;
  for (const name of [ANNOTATIONS.defaultContainer, ANNOTATIONS.defaultLogsContainer]) {
    if (only !== undefined && annotations[name] === only) delete annotations[name];
  }
  dropIfEmpty(metadata, 'annotations');
}
