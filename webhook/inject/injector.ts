import { errorMessage } from '../../runtime/index.js';
import type { MeshConfig } from '../../crds/index.js';
import { applyStrategicMergePatch, builtinListStrategy, clone, deepFreeze, isPlainObject, type StrippedValues } from '../../kube-patch/index.js';
import { InjectionError } from './injection-error.js';
import { injectionRequired, type InjectionDecision } from './injection-required.js';
import { injectionStatusOf } from './injection-status.js';
import type { InjectorConfig } from './injector-config.js';
import { ANNOTATIONS } from '../../names/index.js';
import { objectList, stringMap, type JsonObject, type Pod } from './pod.js';
import { postProcessPod, type ProxyEnvMemo } from './post-process.js';
import { newRenderedYamlReader, type RenderedYamlReader } from './rendered-yaml-reader.js';
import { newRenderMemo } from './render-memo.js';
import { buildTemplateData, type TemplateData } from './template-data.js';
import { newTemplateCompiler, type TemplateCompiler } from './template-compiler.js';
import { appPodOf } from './uninject.js';
import { parseBool, validateAnnotations } from './validate-annotations.js';
import type { WorkloadMeta } from './workload-meta.js';

/** One injection: the pod and everything around it that shapes its sidecar. */
export interface InjectParams {
  readonly pod: Pod;
  /** The request's namespace: fills `metadata.namespace` when the pod has none. */
  readonly namespace: string;
  readonly meshConfig: MeshConfig;
  /** The injector's revision; '' is the default revision. */
  readonly revision?: string;
  /** ENABLE_LEGACY_FSGROUP_INJECTION (default true): the pod's fsGroup becomes 1337 when unset. */
  readonly legacyFsGroup?: boolean;
  /** REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: the agent probes the app on localhost. */
  readonly rewriteProbeLegacyLocalhost?: boolean;
  /** Env from the webhook's URL path (`/inject/cluster/<id>/net/<network>` gives MESH_META_CLUSTER_ID, MESH_META_NETWORK). */
  readonly urlEnv?: Readonly<Record<string, string>>;
  /** The proxy image when the pod does not name one. */
  readonly proxyImage?: string;
  /** The workload that holds the pod, when the pod does not say (a kube-inject pod template has no owner references). */
  readonly workload?: WorkloadMeta;
}

export interface Injector {
  /** Whether the pod gets a sidecar (§1.3 order). */
  required(pod: Pod, namespace: string): InjectionDecision;
  /**
   * The injected pod; throws an `InjectionError` the webhook turns into a denial. The given pod is
   * not changed; the injected one shares what injection left as it was with it, and parts with
   * the remembered renders (frozen): read it, or copy what you change.
   */
  inject(params: InjectParams): Pod;
  /** The template names, sorted. */
  readonly templateNames: readonly string[];
}

export interface CompileOptions {
  /** What the templates' `env` function reads (no process environment here). */
  readonly env?: Readonly<Record<string, string>>;
  /** Compiles the templates, keeping what it compiled for injectors built later (a fresh one when absent). */
  readonly templates?: TemplateCompiler;
}

/** A template's overlay for the data, remembered by what the template read (see render-memo.ts); frozen. */
type RenderTemplate = (data: TemplateData) => JsonObject;

/** Compiles every template up front (or takes it as compiled before for the same text and `env`). */
export function compileInjector(given: InjectorConfig, options: CompileOptions = {}): Injector {
  // The injector's own values, frozen: templates read them as one unchanging object (render-memo.ts).
  const config: InjectorConfig = { ...given, values: deepFreeze(clone(given.values)) };
  const templates = new Map<string, RenderTemplate>();
  const compiler = options.templates ?? newTemplateCompiler();
  for (const [name, text] of Object.entries(config.templates)) {
    try {
      const compiled = compiler.compile(options.env ?? {}, text);
      // Overlays are only read (merges copy what they take): frozen, so that a write would throw, and shared.
      const reader = newRenderedYamlReader();
      const memo = newRenderMemo((data: TemplateData) => deepFreeze(renderOverlay(compiled, data, reader)));
      templates.set(name, (data) => memo.get(data));
    } catch (error) {
      throw new InjectionError('injection-template-failed', `failed to run injection template: template "${name}": ${errorMessage(error)}`, { cause: error });
    }
  }
  const templateNames = [...templates.keys()].sort();
  const compiled: Compiled = { templates, templateNames, proxyEnvMemo: new WeakMap(), strippedValues: new WeakMap(), statusTexts: new WeakMap() };
  return {
    templateNames,
    required: (pod, namespace) => injectionRequired(config, pod, namespace),
    inject: (params) => injectPod(config, compiled, params),
  };
}

/**
 * What an injector compiled, and what it remembers about its renders (frozen, and the same objects
 * for as long as a render is remembered): their directive-free forms as merges add them, and the
 * proxy containers with their env set. Pods of one workload then get the very same objects.
 */
interface Compiled {
  readonly templates: ReadonlyMap<string, RenderTemplate>;
  readonly templateNames: readonly string[];
  readonly proxyEnvMemo: ProxyEnvMemo;
  readonly strippedValues: StrippedValues;
  readonly statusTexts: StatusTexts;
}

/** The status annotation of a remembered render (one template's frozen overlay), by revision. */
type StatusTexts = WeakMap<Pod, { readonly revision: string; readonly text: string }>;

/** The status annotation's value: what the templates add (the same for every pod of a remembered render). */
function statusTextOf(templatePod: Pod, revision: string, texts: StatusTexts): string {
  const known = texts.get(templatePod);
  if (known !== undefined && known.revision === revision) return known.text;
  const text = JSON.stringify(injectionStatusOf(templatePod, revision));
  if (Object.isFrozen(templatePod)) texts.set(templatePod, { revision, text });
  return text;
}

function injectPod(config: InjectorConfig, { templates, templateNames, proxyEnvMemo, strippedValues, statusTexts }: Compiled, params: InjectParams): Pod {
  const podMetadata = params.pod['metadata'];
  const annotations = stringMap(isPlainObject(podMetadata) ? podMetadata['annotations'] : undefined);
  validateAnnotations(annotations);

  // Re-injection starts from the app's own pod, so that injecting twice gives what injecting once
  // does. Nothing below writes to it or to the renders: merges and post-processing copy what they change.
  const appPod = withNamespace(appPodOf(params.pod), params.namespace);
  const namespace = String((appPod['metadata'] as JsonObject)['namespace']);
  const revision = params.revision ?? '';
  const urlEnv = params.urlEnv ?? {};
  const data = buildTemplateData({
    pod: appPod,
    namespace,
    meshConfig: params.meshConfig,
    values: config.values,
    revision,
    urlEnv,
    proxyImage: params.proxyImage,
    workload: params.workload,
    rewriteProbeLegacyLocalhost: params.rewriteProbeLegacyLocalhost ?? false,
  });

  let merged: Pod = appPod;
  let templatePod: Pod = {};
  for (const name of selectTemplates(config, annotations, templateNames)) {
    const render = templates.get(name) as RenderTemplate;
    const overlay = render(data);
    // The first overlay is the template pod as it is (both are only read).
    templatePod = Object.keys(templatePod).length === 0 ? overlay : mergePod(templatePod, overlay, strippedValues);
    merged = mergePod(merged, overlay, strippedValues);
  }
  merged = reapplyUserContainers(merged, appPod, templatePod);

  const statusPort = Number(annotations[ANNOTATIONS.statusPort] ?? data.proxyConfig.statusPort);
  const probeAnnotation = annotations[ANNOTATIONS.rewriteAppHTTPProbers];
  const webhookValues = (data.values['sidecarInjectorWebhook'] ?? {}) as JsonObject;
  const global = (data.values['global'] ?? {}) as JsonObject;
  const proxyValues = (global['proxy'] ?? {}) as JsonObject;
  return postProcessPod(merged, {
    meshConfig: params.meshConfig,
    statusPort,
    rewriteProbes: (probeAnnotation === undefined ? undefined : parseBool(probeAnnotation)) ?? webhookValues['rewriteAppHTTPProbe'] === true,
    holdApplication: data.proxyConfig.holdApplicationUntilProxyStarts || proxyValues['holdApplicationUntilProxyStarts'] === true,
    network: typeof global['network'] === 'string' ? global['network'] : '',
    statusText: statusTextOf(templatePod, revision, statusTexts),
    injectedAnnotations: config.injectedAnnotations,
    urlEnv,
    legacyFsGroup: params.legacyFsGroup ?? true,
    proxyEnvMemo,
  });
}

/** The pod with `metadata.namespace` set to `namespace` when it has none (a shallow copy then). */
function withNamespace(pod: Pod, namespace: string): Pod {
  const metadata = pod['metadata'];
  const current = isPlainObject(metadata) ? metadata['namespace'] : undefined;
  if (typeof current === 'string' && current !== '') return pod;
  return { ...pod, metadata: { ...(isPlainObject(metadata) ? metadata : {}), namespace } };
}

/** `inject.mesh.io/templates` (aliases expanded), else the config's defaults; an unknown name fails. */
function selectTemplates(config: InjectorConfig, annotations: Readonly<Record<string, string>>, known: readonly string[]): string[] {
  const requested = annotations[ANNOTATIONS.templates];
  const names =
    requested === undefined
      ? [...config.defaultTemplates]
      : requested
          .split(',')
          .map((name) => name.trim())
          .filter((name) => name !== '');
  const resolved = names.flatMap((name) => config.aliases[name] ?? [name]);
  for (const name of resolved) {
    if (!known.includes(name)) throw new InjectionError('injection-template-not-found', `requested template "${name}" not found; have ${known.join(', ')}`);
  }
  return resolved;
}

function renderOverlay(render: (data: TemplateData) => string, data: TemplateData, reader: RenderedYamlReader): JsonObject {
  let overlay: unknown;
  try {
    overlay = reader.read(render(data));
  } catch (error) {
    throw new InjectionError('injection-template-failed', `failed to run injection template: ${errorMessage(error)}`, { cause: error });
  }
  if (overlay === null || overlay === undefined) return {};
  if (!isPlainObject(overlay))
    throw new InjectionError('injection-template-failed', 'failed to run injection template: the template did not render a YAML object');
  return overlay;
}

function mergePod(pod: Pod, overlay: JsonObject, strippedValues?: StrippedValues): Pod {
  return applyStrategicMergePatch(pod, overlay, builtinListStrategy, { strippedValues }) as Pod;
}

/**
 * A container the user declared under a template container's name (a `mesh-proxy` with its own
 * resources, a gateway's `image: auto`) keeps the user's fields over the template's; the user's
 * declarations are kept in `proxy.mesh.io/overrides` so that re-injection and uninjection find them.
 */
function reapplyUserContainers(merged: Pod, appPod: Pod, templatePod: Pod): Pod {
  const templateSpec = (templatePod['spec'] ?? {}) as JsonObject;
  const appSpec = (appPod['spec'] ?? {}) as JsonObject;
  const overrides: Record<string, JsonObject[]> = {};
  let result = merged;
  for (const field of ['containers', 'initContainers']) {
    for (const templateContainer of objectList(templateSpec, field)) {
      const user = objectList(appSpec, field).find((container) => container['name'] === templateContainer['name']);
      if (!user) continue;
      (overrides[field] ??= []).push(clone(user));
      const overlay = clone(user);
      if (overlay['image'] === 'auto') delete overlay['image'];
      result = mergePod(result, { spec: { [field]: [overlay] } });
    }
  }
  if (Object.keys(overrides).length === 0) return result;
  const metadata = isPlainObject(result['metadata']) ? result['metadata'] : {};
  return { ...result, metadata: { ...metadata, annotations: { ...stringMap(metadata['annotations']), [ANNOTATIONS.overrides]: JSON.stringify(overrides) } } };
}
