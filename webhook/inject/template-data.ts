import { parse } from 'yaml';
import type { MeshConfig, ProxyConfig, ProxyConfigInput } from '../../crds/index.js';
import { clone, isPlainObject } from '../../kube-patch/index.js';
import { ANNOTATIONS, LABELS } from '../../names/index.js';
import { ENV } from './proxy-env.js';
import { proxyImageType, valuesProxyImage } from './proxy-image.js';
import { stringMap, type JsonObject, type Pod } from './pod.js';
import { workloadMetaOf, type WorkloadMeta } from './workload-meta.js';

/** What a template sees: the (stripped) pod, its workload, the effective proxy config, the mesh config and the values. */
export interface TemplateData {
  readonly typeMeta: { apiVersion: string; kind: string };
  readonly deploymentMeta: { name: string; namespace: string };
  readonly objectMeta: JsonObject;
  readonly spec: JsonObject;
  readonly proxyConfig: ProxyConfig;
  readonly meshConfig: MeshConfig;
  readonly values: JsonObject;
  readonly revision: string;
  readonly estimatedConcurrency: number;
  readonly proxyImage: string;
  readonly rewriteProbeLegacyLocalhost: boolean;
}

export interface TemplateDataInput {
  readonly pod: Pod;
  readonly namespace: string;
  readonly meshConfig: MeshConfig;
  readonly values: Readonly<JsonObject>;
  readonly revision: string;
  readonly urlEnv: Readonly<Record<string, string>>;
  readonly proxyImage: string | undefined;
  readonly workload: WorkloadMeta | undefined;
  readonly rewriteProbeLegacyLocalhost: boolean;
}

const DEFAULT_CONCURRENCY = 2;

export function buildTemplateData(input: TemplateDataInput): TemplateData {
  const metadata = (input.pod['metadata'] ?? {}) as JsonObject;
  const annotations = stringMap(metadata['annotations']);
  const proxyConfig = effectiveProxyConfig(input.meshConfig.defaultConfig, annotations[ANNOTATIONS.proxyConfig]);
  const values = effectiveValues(input.values, input.urlEnv, stringMap(metadata['labels'])[LABELS.network]);
  const workload = input.workload ?? workloadMetaOf(input.pod, input.namespace);
  return {
    typeMeta: { apiVersion: workload.apiVersion, kind: workload.kind },
    deploymentMeta: { name: workload.name, namespace: workload.namespace },
    objectMeta: metadata,
    spec: (input.pod['spec'] ?? {}) as JsonObject,
    proxyConfig,
    meshConfig: input.meshConfig,
    values,
    revision: input.revision,
    estimatedConcurrency: estimatedConcurrency(proxyConfig, annotations, values),
    proxyImage: proxyImage(annotations, values, input.proxyImage, proxyConfig),
    rewriteProbeLegacyLocalhost: input.rewriteProbeLegacyLocalhost,
  };
}

/**
 * `proxy.mesh.io/config` (already validated) laid over the mesh's defaultConfig; proxyMetadata
 * merges key by key. Without the annotation, the defaults themselves when they are frozen (as the
 * mesh config is): the templates then read them as one unchanging object.
 */
export function effectiveProxyConfig(defaults: ProxyConfig, annotation: string | undefined): ProxyConfig {
  if (annotation === undefined) return Object.isFrozen(defaults) ? defaults : clone(defaults);
  const overlay = (parse(annotation) ?? {}) as ProxyConfigInput;
  return { ...clone(defaults), ...clone(overlay), proxyMetadata: { ...defaults.proxyMetadata, ...overlay.proxyMetadata } };
}

/** The cluster and network come from the values, then the webhook URL, then the pod's network label. */
function effectiveValues(values: Readonly<JsonObject>, urlEnv: Readonly<Record<string, string>>, networkLabel: string | undefined): JsonObject {
  const cluster = urlEnv[ENV.clusterId];
  const network = networkLabel ?? urlEnv[ENV.network];
  // Nothing to change (the usual case): the injector's own values, which nothing writes.
  if (cluster === undefined && network === undefined) return values as JsonObject;
  const result = clone(values) as JsonObject;
  const global = objectAt(result, 'global');
  if (cluster !== undefined) objectAt(global, 'multiCluster')['clusterName'] = cluster;
  if (network !== undefined) global['network'] = network;
  return result;
}

/**
 * The proxy's worker threads: proxyConfig.concurrency when set, else the CPU it may use (the
 * limit or request annotation, else the values' resources) rounded up, else 2.
 */
function estimatedConcurrency(proxyConfig: ProxyConfig, annotations: Readonly<Record<string, string>>, values: JsonObject): number {
  if (proxyConfig.concurrency !== undefined && proxyConfig.concurrency > 0) return proxyConfig.concurrency;
  const resources = fieldAt(fieldAt(fieldAt(values, 'global'), 'proxy'), 'resources');
  const candidates = [
    annotations[ANNOTATIONS.proxyCPULimit],
    annotations[ANNOTATIONS.proxyCPU],
    fieldAt(resources, 'limits')['cpu'],
    fieldAt(resources, 'requests')['cpu'],
  ];
  for (const candidate of candidates) {
    const cores = parseCpu(candidate);
    if (cores !== undefined && cores > 0) return Math.ceil(cores);
  }
  return DEFAULT_CONCURRENCY;
}

/** A Kubernetes CPU quantity (`2`, `1.5`, `500m`) in cores. */
function parseCpu(quantity: unknown): number | undefined {
  if (typeof quantity === 'number') return quantity;
  if (typeof quantity !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)(m?)$/.exec(quantity.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  return match[2] === 'm' ? amount / 1000 : amount;
}

/** `sidecar.mesh.io/proxyImage` when it names a full image, else the override, else the values' image of the pod's image type. */
function proxyImage(annotations: Readonly<Record<string, string>>, values: JsonObject, override: string | undefined, proxyConfig: ProxyConfig): string {
  const fromAnnotation = annotations[ANNOTATIONS.proxyImage];
  if (fromAnnotation?.includes('/')) return fromAnnotation;
  if (override !== undefined && override !== '') return override;
  return valuesProxyImage(values, proxyImageType(annotations, proxyConfig, values), fromAnnotation);
}

/** A map field of `parent`, or an empty map when there is none (without writing it). */
function fieldAt(parent: Readonly<JsonObject>, field: string): Readonly<JsonObject> {
  const value = parent[field];
  return isPlainObject(value) ? value : {};
}

function objectAt(parent: JsonObject, field: string): JsonObject {
  const value = parent[field];
  if (isPlainObject(value)) return value;
  const created: JsonObject = {};
  parent[field] = created;
  return created;
}
