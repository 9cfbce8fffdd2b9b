import type { KubeConfig } from '@kubernetes/client-node';
import type { FastifyInstance } from 'fastify';
import type { MeshConfig } from '../crds/index.js';
import type { ListenAddress, Logging, Manager, MeshMetrics, Settings } from '../runtime/index.js';
import type { AdmissionRoute } from './admission-http.js';
import { newAdmissionServer, type AdmissionServer } from './admission-server.js';
import type { CaBundleSource, ServingIdentity } from './serving-identity.js';
import { newInjectionWebhook } from './injection-webhook.js';
import { addInjectorConfigSource } from './injector-config-source.js';
import { newValidationRoute } from './validation-webhook.js';
import { addWebhookConfigPatcher } from './webhook-config-patcher.js';
import { webhookSettingsFromSettings } from './webhook-settings.js';

/** The daemon's serving identity and the bundle that verifies it, once the CA has loaded. */
export interface WebhookServing {
  readonly identity: ServingIdentity;
  /** Absent when nothing is known to verify the serving certificate (files without `--caCertFile`). */
  readonly caBundle?: CaBundleSource;
}

export interface WebhookSetupOptions {
  /** Read through `webhook-settings.ts` only. */
  readonly settings: Settings<'pilot-discovery'>;
  /** `--httpsAddr`. */
  readonly address: ListenAddress;
  /** Waits for the CA (or the certificate files): what the HTTPS server serves. */
  readonly serving: (signal: AbortSignal) => Promise<WebhookServing>;
  /** Kubernetes mode: the webhook configurations are kept patched. */
  readonly kubeConfig?: KubeConfig;
  /** `--namespace`. */
  readonly namespace: string;
  /** The mesh config as it is now. */
  readonly meshConfig: () => MeshConfig;
  /** Local mode: the folder with the injector's `config` and `values`; default `./var/lib/mesh/inject`. */
  readonly injectDir?: string;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** Scopes `default` (injection), `validationServer` and `validationController`. */
  readonly logging: Logging;
}

export interface Webhooks {
  readonly server: AdmissionServer;
  /** `/debug/inject`, for the daemon's debug endpoints. */
  debugRoutes(app: FastifyInstance): void;
}

/**
 * Registers the admission webhooks with the manager: the HTTPS server on `--httpsAddr` with
 * `/validate` (and `/inject` unless INJECT_ENABLED is false), and in Kubernetes mode the
 * leader-elected controller that keeps the webhook configurations' `caBundle` and failure policy.
 */
export function setupWebhookWithManager(manager: Manager, options: WebhookSetupOptions): Webhooks {
  const { logging, metrics } = options;
  const settings = webhookSettingsFromSettings(options.settings);
  const log = logging.scope('default');
  const routes = new Map<string, AdmissionRoute>();
  const validation = newValidationRoute({ metrics, log: logging.scope('validationServer') });
  routes.set('/validate', validation);
  routes.set('/validate/', validation);
  let debugRoutes: Webhooks['debugRoutes'] = () => undefined;
  let injectorLoaded: (signal: AbortSignal) => Promise<void> = () => Promise.resolve();
  if (settings.injectEnabled) {
    const injection = newInjectionWebhook({ settings, meshConfig: options.meshConfig, metrics, log });
    routes.set('/inject', injection.route);
    routes.set('/inject/', injection.route);
    debugRoutes = (app) => injection.debugRoutes(app);
    const source = addInjectorConfigSource({
      manager,
      ...(options.kubeConfig ? { kubeConfig: options.kubeConfig } : {}),
      namespace: options.namespace,
      revision: settings.revision,
      ...(options.injectDir ? { dir: options.injectDir } : {}),
      log,
      clock: manager.clock,
      onVersion: (version) => injection.offer(version),
    });
    injectorLoaded = (signal) => source.loaded(signal);
  } else {
    log.info('sidecar injection is disabled (INJECT_ENABLED=false): /inject is not served');
  }
  const server = newAdmissionServer({
    address: options.address,
    identity: async (signal) => {
      const { identity } = await options.serving(signal);
      await injectorLoaded(signal);
      return identity;
    },
    routes,
    log,
  });
  manager.add(server);
  if (options.kubeConfig) {
    addWebhookConfigPatcher({
      manager,
      kubeConfig: options.kubeConfig,
      revision: settings.revision,
      namespace: options.namespace,
      injectionWebhookConfigName: settings.injectionWebhookConfigName,
      caBundle: async (signal) => (await options.serving(signal)).caBundle,
      metrics,
      log: logging.scope('validationController'),
    });
  }
  return { server, debugRoutes: (app) => debugRoutes(app) };
}
