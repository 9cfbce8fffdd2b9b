import type { MeshConfig } from '../../crds/index.js';
import { isPlainObject } from '../../kube-patch/index.js';
import { rewriteAppProbes } from './app-probes.js';
import type { InjectionStatus } from './injection-status.js';
import { ANNOTATIONS, CORE_DUMP_CONTAINER, ENV, INIT_CONTAINER, LABELS, MERGED_METRICS_PATH, PROXY_CONTAINER, VALIDATION_CONTAINER } from './names.js';
import { copyOnWrite, objectList, setEnv, stringMap, type JsonObject, type Pod } from './pod.js';
import { LEGACY_FS_GROUP } from './uninject.js';
import { parseBool } from './validate-annotations.js';

export interface PostProcessInput {
  readonly meshConfig: MeshConfig;
  readonly statusPort: number;
  readonly rewriteProbes: boolean;
  readonly holdApplication: boolean;
  readonly network: string;
  readonly status: InjectionStatus;
  readonly injectedAnnotations: Readonly<Record<string, string>>;
  readonly urlEnv: Readonly<Record<string, string>>;
  readonly legacyFsGroup: boolean;
}

/**
 * What injection does after the templates: URL env, metrics merge, probe rewrites, metadata,
 * fsGroup, container order. `merged` is left as it is (it shares parts with the request's pod and
 * the templates' renders): what changes is copied first, the rest is shared with the result.
 */
export function postProcessPod(merged: Pod, input: PostProcessInput): Pod {
  const pod: Pod = { ...merged };
  const own = copyOnWrite();
  const metadata = own(pod, 'metadata');
  const spec = own(pod, 'spec');
  const containers = objectList(spec, 'containers');
  const proxyAt = containers.findIndex((container) => container['name'] === PROXY_CONTAINER);
  // Status port 0 means the agent serves no status port: nothing to scrape, nowhere to send probes.
  if (proxyAt >= 0 && input.statusPort !== 0) {
    const proxy: JsonObject = { ...containers[proxyAt] };
    containers[proxyAt] = proxy;
    for (const [name, value] of Object.entries(input.urlEnv)) {
      if (name !== ENV.clusterId && name !== ENV.network) setEnv(proxy, name, value);
    }
    applyPrometheusMerge(metadata, proxy, input, own);
    if (input.rewriteProbes) {
      const probers = rewriteAppProbes(containers, input.statusPort);
      if (Object.keys(probers).length > 0) setEnv(proxy, ENV.appProbers, JSON.stringify(probers));
    }
  }
  if (input.network !== '') own(metadata, 'labels')[LABELS.network] = input.network;
  const annotations = own(metadata, 'annotations');
  annotations[ANNOTATIONS.status] = JSON.stringify(input.status);
  Object.assign(annotations, input.injectedAnnotations);
  if (input.legacyFsGroup) {
    const securityContext = spec['securityContext'];
    if (!isPlainObject(securityContext) || securityContext['fsGroup'] === undefined) own(spec, 'securityContext')['fsGroup'] = LEGACY_FS_GROUP;
  }
  reorderContainers(spec, containers, input.holdApplication);
  return pod;
}

/**
 * Prometheus scrapes the agent, which merges the app's metrics with the proxy's: the app's own
 * scrape annotations move to MESH_PROMETHEUS_ANNOTATIONS and the pod's point at the status port.
 */
function applyPrometheusMerge(metadata: JsonObject, proxy: JsonObject, input: PostProcessInput, own: ReturnType<typeof copyOnWrite>): void {
  const annotations = stringMap(metadata['annotations']);
  const optIn = annotations[ANNOTATIONS.mergeMetrics];
  const merge = optIn === undefined ? input.meshConfig.enablePrometheusMerge : parseBool(optIn) === true;
  if (!merge || annotations[ANNOTATIONS.prometheusScrape]?.toLowerCase() === 'false') return;
  const original = {
    scrape: annotations[ANNOTATIONS.prometheusScrape] ?? '',
    path: annotations[ANNOTATIONS.prometheusPath] ?? '',
    port: annotations[ANNOTATIONS.prometheusPort] ?? '',
  };
  if (original.scrape !== '' || original.path !== '' || original.port !== '') setEnv(proxy, ENV.prometheusAnnotations, JSON.stringify(original));
  const target = own(metadata, 'annotations');
  target[ANNOTATIONS.prometheusScrape] = 'true';
  target[ANNOTATIONS.prometheusPort] = String(input.statusPort);
  target[ANNOTATIONS.prometheusPath] = MERGED_METRICS_PATH;
}

/**
 * The proxy goes last so that `kubectl exec` and `logs` default to the app, or first when the app
 * must wait for it; the capture init container goes last so that earlier init containers still
 * reach the network, the validation one first.
 */
function reorderContainers(spec: JsonObject, containers: JsonObject[], holdApplication: boolean): void {
  spec['containers'] = move(containers, PROXY_CONTAINER, holdApplication ? 'first' : 'last');
  if (!Array.isArray(spec['initContainers'])) return;
  let init = move(objectList(spec, 'initContainers'), INIT_CONTAINER, 'last');
  init = move(init, VALIDATION_CONTAINER, 'first');
  spec['initContainers'] = move(init, CORE_DUMP_CONTAINER, 'last');
}

function move(list: JsonObject[], name: string, to: 'first' | 'last'): JsonObject[] {
  const found = list.find((item) => item['name'] === name);
  if (!found) return list;
  const rest = list.filter((item) => item !== found);
  return to === 'first' ? [found, ...rest] : [...rest, found];
}
