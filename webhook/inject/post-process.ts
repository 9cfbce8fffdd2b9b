import type { MeshConfig } from '../../crds/index.js';
import { isPlainObject } from '../../kube-patch/index.js';
import { rewriteAppProbes } from './app-probes.js';
import { ANNOTATIONS, CORE_DUMP_CONTAINER, INIT_CONTAINER, LABELS, PROXY_CONTAINER, VALIDATION_CONTAINER } from '../../names/index.js';
import { ENV, MERGED_METRICS_PATH } from './proxy-env.js';
import { copyOnWrite, objectList, setEnv, stringMap, type JsonObject, type Pod } from './pod.js';
import { LEGACY_FS_GROUP } from './uninject.js';
import { parseBool } from './validate-annotations.js';

export interface PostProcessInput {
  readonly meshConfig: MeshConfig;
  readonly statusPort: number;
  readonly rewriteProbes: boolean;
  readonly holdApplication: boolean;
  readonly network: string;
  /** The `sidecar.mesh.io/status` annotation's value (the JSON of an InjectionStatus). */
  readonly statusText: string;
  readonly injectedAnnotations: Readonly<Record<string, string>>;
  readonly urlEnv: Readonly<Record<string, string>>;
  readonly legacyFsGroup: boolean;
  /** Where the proxy containers with their env set are remembered (an injector's own); none, none remembered. */
  readonly proxyEnvMemo?: ProxyEnvMemo;
}

/**
 * Proxy containers with env entries set, remembered for each container a template rendered: a
 * remembered render gives the same (frozen) container pod after pod, and with the same entries to
 * set, the same frozen container comes out, whose encoding the webhook then remembers as well.
 */
export type ProxyEnvMemo = WeakMap<JsonObject, { readonly entries: readonly EnvEntry[]; readonly container: JsonObject }>;

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
  const proxy = containers[proxyAt];
  if (proxy !== undefined && input.statusPort !== 0) {
    const env: EnvEntry[] = [];
    for (const [name, value] of Object.entries(input.urlEnv)) {
      if (name !== ENV.clusterId && name !== ENV.network) env.push([name, value]);
    }
    const prometheus = applyPrometheusMerge(metadata, input, own);
    if (prometheus !== undefined) env.push(prometheus);
    if (input.rewriteProbes) {
      const probers = rewriteAppProbes(containers, input.statusPort);
      if (Object.keys(probers).length > 0) env.push([ENV.appProbers, JSON.stringify(probers)]);
    }
    containers[proxyAt] = withEnv(proxy, env, input.proxyEnvMemo);
  }
  if (input.network !== '') own(metadata, 'labels')[LABELS.network] = input.network;
  const annotations = own(metadata, 'annotations');
  annotations[ANNOTATIONS.status] = input.statusText;
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
function applyPrometheusMerge(metadata: JsonObject, input: PostProcessInput, own: ReturnType<typeof copyOnWrite>): EnvEntry | undefined {
  const annotations = stringMap(metadata['annotations']);
  const optIn = annotations[ANNOTATIONS.mergeMetrics];
  const merge = optIn === undefined ? input.meshConfig.enablePrometheusMerge : parseBool(optIn) === true;
  if (!merge || annotations[ANNOTATIONS.prometheusScrape]?.toLowerCase() === 'false') return undefined;
  const original = {
    scrape: annotations[ANNOTATIONS.prometheusScrape] ?? '',
    path: annotations[ANNOTATIONS.prometheusPath] ?? '',
    port: annotations[ANNOTATIONS.prometheusPort] ?? '',
  };
  const target = own(metadata, 'annotations');
  target[ANNOTATIONS.prometheusScrape] = 'true';
  target[ANNOTATIONS.prometheusPort] = String(input.statusPort);
  target[ANNOTATIONS.prometheusPath] = MERGED_METRICS_PATH;
  return original.scrape !== '' || original.path !== '' || original.port !== '' ? [ENV.prometheusAnnotations, JSON.stringify(original)] : undefined;
}

export type EnvEntry = readonly [name: string, value: string];

/** The container with the env entries set in order (a copy; itself when there are none), remembered when it is a render's. */
function withEnv(container: JsonObject, entries: readonly EnvEntry[], memo: ProxyEnvMemo | undefined): JsonObject {
  if (entries.length === 0) return container;
  // Only a frozen container is a render's: the same object for as long as the render is remembered.
  const remembered = memo !== undefined && Object.isFrozen(container);
  const known = remembered ? memo.get(container) : undefined;
  if (known !== undefined && sameEntries(known.entries, entries)) return known.container;
  const result: JsonObject = { ...container };
  for (const [name, value] of entries) setEnv(result, name, value);
  if (!remembered) return result;
  // Frozen like the render it comes from: shared by every pod that gets it, changed by none.
  for (const entry of objectList(result, 'env')) Object.freeze(entry);
  Object.freeze(result['env']);
  memo.set(container, { entries, container: Object.freeze(result) });
  return result;
}

function sameEntries(a: readonly EnvEntry[], b: readonly EnvEntry[]): boolean {
  return a.length === b.length && a.every(([name, value], i) => name === b[i]?.[0] && value === b[i]?.[1]);
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
