import type { FastifyInstance } from 'fastify';
import type { MeshConfig } from '../crds/index.js';
import { errorMessage, type Logger, type MeshMetrics } from '../runtime/index.js';
import type { AdmissionRoute } from './admission-http.js';
import { isRecord, type AdmissionResponse } from './admission-review.js';
import { compileInjector, injectionPatch, newTemplateCompiler, parseInjectorConfig, type Injector, type InjectorConfig } from './inject/index.js';
import { injectionCacheKey, newInjectionCache } from './injection-cache.js';
import { newPatchEncoder } from './patch-encoder.js';
import type { InjectorConfigVersion } from './injector-config-source.js';
import type { WebhookSettings } from './webhook-settings.js';
import { revisionLabelValue } from '../names/index.js';

export interface InjectionWebhookOptions {
  readonly settings: WebhookSettings;
  /** The mesh config as it is now (its `defaultConfig` is the proxy config injected pods get). */
  readonly meshConfig: () => MeshConfig;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  readonly log: Logger;
  /** Builds the injector of a config; `compileInjector` unless a test watches it. */
  readonly compile?: (config: InjectorConfig) => Injector;
  /** How many computed patches are kept for pods asked about again (a ReplicaSet's); default 1024. */
  readonly cacheEntries?: number;
}

/** `/inject` over the injector of the moment, swapped without a restart as its config changes. */
export interface InjectionWebhook {
  readonly route: AdmissionRoute;
  /** Compiles a new version and serves it; a broken one is refused (logged) and the last good one keeps serving. */
  offer(version: InjectorConfigVersion): boolean;
  /** `/debug/inject`: the active templates and values. */
  debugRoutes(app: FastifyInstance): void;
}

type InjectedAnswer = AdmissionResponse & { readonly allowed: true; readonly patch: readonly unknown[]; readonly encodedPatch: string };

interface ActiveInjector {
  readonly version: InjectorConfigVersion;
  readonly injector: Injector;
}

const DEFAULT_CACHE_ENTRIES = 1024;

export function newInjectionWebhook(options: InjectionWebhookOptions): InjectionWebhook {
  const { metrics, log, settings } = options;
  // One compiler for the webhook's life: a reload recompiles only the templates that changed.
  const templates = newTemplateCompiler();
  const compile = options.compile ?? ((config: InjectorConfig) => compileInjector(config, { templates }));
  let active: ActiveInjector | undefined;
  // Answers of successful injections (patch and its wire encoding) under the active injector and `patchesMeshConfig`.
  const patches = newInjectionCache<InjectedAnswer>(options.cacheEntries ?? DEFAULT_CACHE_ENTRIES);
  let patchesMeshConfig: MeshConfig | undefined;
  const encoder = newPatchEncoder();

  const handle = (object: unknown, namespace: string, path: string): AdmissionResponse => {
    if (!active) return { allowed: false, message: 'the injector has no configuration yet' };
    if (!isRecord(object)) return { allowed: false, message: 'could not decode pod: the request has no object' };
    const meshConfig = options.meshConfig();
    if (meshConfig !== patchesMeshConfig) {
      patches.clear();
      patchesMeshConfig = meshConfig;
    }
    // Same inputs, same injector, same mesh config: the decision was to inject and the patch is this one.
    const key = patches.worthLooking() ? injectionCacheKey({ pod: object, namespace, path }) : undefined;
    const cached = key === undefined ? undefined : patches.get(key);
    if (cached !== undefined) {
      metrics.counter('sidecar_injection_success_total').inc();
      return cached;
    }
    const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
    const pod = metadata['namespace'] === undefined && namespace !== '' ? { ...object, metadata: { ...metadata, namespace } } : object;
    // A pod without metadata (an attacker's, or a broken client's) has none to read: found by fuzzing.
    const podMetadata = isRecord(pod['metadata']) ? pod['metadata'] : {};
    const podNamespace = typeof podMetadata['namespace'] === 'string' ? podMetadata['namespace'] : namespace;
    const decision = active.injector.required(pod, podNamespace);
    if (!decision.inject) {
      metrics.counter('sidecar_injection_skip_total').inc();
      log.debug({ pod: podName(pod), namespace: podNamespace, reason: decision.reason }, 'skipping injection');
      return { allowed: true };
    }
    try {
      const injected = active.injector.inject({
        pod,
        namespace: podNamespace,
        meshConfig,
        revision: revisionLabelValue(settings.revision),
        legacyFsGroup: settings.legacyFsGroup,
        rewriteProbeLegacyLocalhost: settings.rewriteProbeLegacyLocalhost,
        urlEnv: injectEnvsOfPath(path),
      });
      metrics.counter('sidecar_injection_success_total').inc();
      const patch = injectionPatch(pod, injected);
      const answer: InjectedAnswer = { allowed: true, patch, encodedPatch: encoder.encode(patch) };
      if (key !== undefined) patches.set(key, answer);
      return answer;
    } catch (error) {
      metrics.counter('sidecar_injection_failure_total').inc();
      log.info({ pod: podName(pod), namespace: podNamespace, error: errorMessage(error) }, 'injection failed');
      return { allowed: false, message: errorMessage(error) };
    }
  };

  return {
    route: {
      handle: (request, path) => {
        metrics.counter('sidecar_injection_requests_total').inc();
        return handle(request.object, request.namespace, path);
      },
    },
    offer(version) {
      try {
        const injector = compile(parseInjectorConfig(version.text));
        active = { version, injector };
        patches.clear();
        log.info({ origin: version.origin, templates: injector.templateNames }, 'injector configuration loaded');
        return true;
      } catch (error) {
        log.error({ origin: version.origin, error: errorMessage(error) }, 'refused a new injector configuration; the last good one keeps serving');
        return false;
      }
    },
    debugRoutes(app) {
      app.get('/debug/inject', async () =>
        active
          ? { origin: active.version.origin, templates: active.injector.templateNames, config: active.version.text.config, values: active.version.text.values }
          : {},
      );
    },
  };
}

/**
 * Extra proxy env from the URL, as the reference reads it: `/inject/cluster/<id>/net/<network>`
 * (→ MESH_META_CLUSTER_ID, MESH_META_NETWORK, other pairs `UPPER(k)=v`), or `/inject/:ENV:K=V:ENV:K2=V2`.
 */
export function injectEnvsOfPath(path: string): Record<string, string> {
  const rest = path.replace(/^\/inject\/?/, '');
  const envs: Record<string, string> = {};
  if (rest === '') return envs;
  if (rest.startsWith(':ENV:')) {
    for (const pair of rest.split(':ENV:').slice(1)) {
      const at = pair.indexOf('=');
      if (at > 0) envs[pair.slice(0, at)] = pair.slice(at + 1);
    }
    return envs;
  }
  const parts = rest.split('/').filter((part) => part !== '');
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const key = parts[i] ?? '';
    const value = parts[i + 1] ?? '';
    if (key === 'cluster') envs['MESH_META_CLUSTER_ID'] = value;
    else if (key === 'net') envs['MESH_META_NETWORK'] = value;
    else envs[key.toUpperCase()] = value;
  }
  return envs;
}

function podName(pod: Record<string, unknown>): string {
  const metadata = isRecord(pod['metadata']) ? pod['metadata'] : {};
  if (typeof metadata['name'] === 'string' && metadata['name'] !== '') return metadata['name'];
  return `${typeof metadata['generateName'] === 'string' ? metadata['generateName'] : ''}***** (actual name not yet known)`;
}
