import type { KubeConfig } from '@kubernetes/client-node';
import type { ListenAddress, Logging, Manager, MeshMetrics, Settings } from '../controllers/runtime/index.js';
import type { AdmissionRoute } from './admission-http.js';
import { newAdmissionServer, type AdmissionServer } from './admission-server.js';
import type { CaBundleSource, ServingIdentity } from './serving-identity.js';
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
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  /** Scopes `webhook` and `validation`. */
  readonly logging: Logging;
}

export interface Webhooks {
  readonly server: AdmissionServer;
}

/**
 * Registers the admission webhooks with the manager: the HTTPS server on `--httpsAddr` with
 * `/validate` (and `/inject` unless INJECT_ENABLED is false), and in Kubernetes mode the
 * leader-elected controller that keeps the webhook configurations' `caBundle` and failure policy.
 */
export function setupWebhookWithManager(manager: Manager, options: WebhookSetupOptions): Webhooks {
  const { logging, metrics } = options;
  const settings = webhookSettingsFromSettings(options.settings);
  const log = logging.scope('webhook');
  const routes = new Map<string, AdmissionRoute>();
  const validation = newValidationRoute({ metrics, log: logging.scope('validation') });
  routes.set('/validate', validation);
  routes.set('/validate/', validation);
  const server = newAdmissionServer({ address: options.address, identity: async (signal) => (await options.serving(signal)).identity, routes, log });
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
      log,
    });
  }
  return { server };
}
