import type { KubeConfig, V1MutatingWebhookConfiguration, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { NETWORKING_GROUP, NETWORKING_VERSION } from '../crds/index.js';
import {
  controllerFor,
  errorMessage,
  lazyApiClient,
  newInformerSource,
  runnableOf,
  type Controller,
  type KubeObject,
  type Logger,
  type Manager,
  type MeshMetrics,
  type ObjectKey,
} from '../runtime/index.js';
import type { CaBundleSource } from './serving-identity.js';
import { ALWAYS_REJECT_ANNOTATION, LABELS, revisionLabelValue } from '../names/index.js';

/** Injection webhooks are recognised by this name suffix (the chart prefixes `rev.`, `namespace.`, …). */
export const INJECTOR_WEBHOOK_SUFFIX = 'sidecar-injector.mesh.io';

export interface WebhookConfigPatcherOptions {
  readonly manager: Manager;
  readonly kubeConfig: KubeConfig;
  /** REVISION; '' is `default` in the `mesh.io/rev` label. */
  readonly revision: string;
  /** The daemon's namespace, where the fail-close probe is tried. */
  readonly namespace: string;
  /** INJECTION_WEBHOOK_CONFIG_NAME: '' leaves the mutating configurations alone. */
  readonly injectionWebhookConfigName: string;
  /** Resolves once the CA has loaded; undefined when nothing verifies the serving certificate. */
  readonly caBundle: (signal: AbortSignal) => Promise<CaBundleSource | undefined>;
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  readonly log: Logger;
}

const MUTATING = 'mutating/';
const VALIDATING = 'validating/';

/**
 * Keeps this revision's webhook configurations usable, on the elected leader: the serving
 * certificate's trust bundle in every injection webhook's and validation webhook's `caBundle`
 * (again after each root rotation), and the validation webhooks' `failurePolicy` at `Ignore`
 * until a dry-run create of an invalid Gateway is denied, then `Fail` for good.
 */
export function addWebhookConfigPatcher(options: WebhookConfigPatcherOptions): Controller {
  const { manager, kubeConfig, log, metrics } = options;
  const clock = manager.clock;
  const revisionLabel = `${LABELS.revision}=${revisionLabelValue(options.revision)}`;
  const admission = lazyApiClient(kubeConfig, (k8s) => k8s.AdmissionregistrationV1Api);
  const mutating = newInformerSource<V1MutatingWebhookConfiguration & KubeObject>({
    name: 'mutatingwebhookconfigurations',
    kubeConfig,
    path: '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations',
    labelSelector: revisionLabel,
    log,
    clock,
  });
  const validating = newInformerSource<V1ValidatingWebhookConfiguration & KubeObject>({
    name: 'validatingwebhookconfigurations',
    kubeConfig,
    path: '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations',
    labelSelector: revisionLabel,
    log,
    clock,
  });
  let bundle: string | undefined;
  let readyForFailClose = false;
  // The reference retries the probe from 1 s, doubling, up to 1 min.
  let probeRetryMs = 1000;
  const keyOf =
    (prefix: string) =>
    (object: KubeObject): ObjectKey => ({ namespace: '', name: `${prefix}${object.metadata?.name ?? ''}` });

  let builder = controllerFor(manager, 'webhook-config-patcher').watches(validating, keyOf(VALIDATING)).withLogger(log);
  if (options.injectionWebhookConfigName !== '') builder = builder.watches(mutating, keyOf(MUTATING));
  const controller = builder.complete(async ({ key, log: reconcileLog }) => {
    // No trust bundle yet: its arrival queues every configuration again.
    if (bundle === undefined) return undefined;
    const caBundle = Buffer.from(bundle).toString('base64');
    if (key.name.startsWith(MUTATING)) {
      const current = mutating.store.get({ namespace: '', name: key.name.slice(MUTATING.length) });
      if (!current) return undefined;
      const webhooks = (current.webhooks ?? []).map((webhook) =>
        webhook.name.endsWith(INJECTOR_WEBHOOK_SUFFIX) ? { ...webhook, clientConfig: { ...webhook.clientConfig, caBundle } } : webhook,
      );
      if (JSON.stringify(webhooks) === JSON.stringify(current.webhooks ?? [])) return undefined;
      return replaceOrThrow(
        async () => (await admission()).replaceMutatingWebhookConfiguration({ name: current.metadata?.name ?? '', body: { ...current, webhooks } }),
        () => reconcileLog.info({ name: current.metadata?.name }, 'patched caBundle into the injection webhooks'),
      );
    }
    const current = validating.store.get({ namespace: '', name: key.name.slice(VALIDATING.length) });
    if (!current) return undefined;
    metrics.counter('galley_validation_config_load').inc();
    if (!readyForFailClose && (current.webhooks ?? []).some((webhook) => webhook.clientConfig.caBundle === caBundle)) {
      readyForFailClose = await probeFailClose(kubeConfig, options.namespace, revisionLabel, reconcileLog);
      if (readyForFailClose) reconcileLog.info('endpoint successfully rejected invalid config; switching validation to fail-close');
    }
    // Only ever from Ignore to Fail, as the reference: a configuration that says Fail stays Fail.
    const webhooks = (current.webhooks ?? []).map((webhook) => ({
      ...webhook,
      clientConfig: { ...webhook.clientConfig, caBundle },
      failurePolicy: readyForFailClose || webhook.failurePolicy === 'Fail' ? 'Fail' : 'Ignore',
    }));
    const changed = JSON.stringify(webhooks) !== JSON.stringify(current.webhooks ?? []);
    if (changed) {
      await replaceOrThrow(
        async () => (await admission()).replaceValidatingWebhookConfiguration({ name: current.metadata?.name ?? '', body: { ...current, webhooks } }),
        () => {
          metrics.counter('galley_validation_config_updates').inc();
          reconcileLog.info({ name: current.metadata?.name, failurePolicy: webhooks[0]?.failurePolicy }, 'updated the validation webhook configuration');
        },
        (reason) => metrics.counter('galley_validation_config_update_error').inc({ reason }),
      );
    }
    if (readyForFailClose) return undefined;
    // Not ready to fail closed yet: look again later (the webhook may still be starting).
    const retryMs = probeRetryMs;
    probeRetryMs = Math.min(probeRetryMs * 2, 60_000);
    return { requeueAfterMs: retryMs };
  });

  const enqueueAll = (): void => {
    for (const object of validating.store.list()) controller.enqueue(keyOf(VALIDATING)(object));
    if (options.injectionWebhookConfigName !== '') for (const object of mutating.store.list()) controller.enqueue(keyOf(MUTATING)(object));
  };
  manager.add(
    runnableOf('webhook-ca-bundle', async (signal) => {
      const source = await options.caBundle(signal).catch((error: unknown) => {
        if (signal.aborted) return undefined;
        throw error;
      });
      if (!source) {
        if (!signal.aborted)
          log.warn('no trust bundle for the serving certificate (--tlsCertFile without --caCertFile): webhook configurations are not patched');
        return undefined;
      }
      return source.watch((next) => {
        if (next === bundle) return;
        bundle = next;
        enqueueAll();
      });
    }),
  );
  return controller;
}

/** Replaces a configuration; a failure (a stale cache's conflict, a vanished object, anything else) is counted and thrown, to retry with backoff. */
async function replaceOrThrow(replace: () => Promise<unknown>, onDone: () => void, onError: (reason: string) => void = () => undefined): Promise<undefined> {
  try {
    await replace();
  } catch (error) {
    const { ApiException } = await import('@kubernetes/client-node');
    onError(error instanceof ApiException ? String(error.code) : 'unknown');
    throw error;
  }
  onDone();
  return undefined;
}

/** Whether the API server rejects an invalid Gateway through the validation webhook (dry run: nothing is stored). */
async function probeFailClose(kubeConfig: KubeConfig, namespace: string, revisionLabel: string, log: Logger): Promise<boolean> {
  const [labelKey, labelValue] = revisionLabel.split('=') as [string, string];
  const body = {
    apiVersion: `${NETWORKING_GROUP}/${NETWORKING_VERSION}`,
    kind: 'Gateway',
    metadata: { name: 'invalid-gateway', namespace, labels: { [labelKey]: labelValue }, annotations: { [ALWAYS_REJECT_ANNOTATION]: 'true' } },
    spec: {},
  };
  const { ApiException, CustomObjectsApi } = await import('@kubernetes/client-node');
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  try {
    await custom.createNamespacedCustomObject({ group: NETWORKING_GROUP, version: NETWORKING_VERSION, namespace, plural: 'gateways', body, dryRun: 'All' });
  } catch (error) {
    const text = error instanceof ApiException ? `${String(error.body)}` : errorMessage(error);
    if (text.includes('denied the request')) return true;
    // Without the Gateway kind nothing can be validated: failing closed costs nothing.
    if (error instanceof ApiException && error.code === 404) return true;
    log.info({ error: text.slice(0, 300) }, 'not ready to switch validation to fail-closed');
    return false;
  }
  log.info('not ready to switch validation to fail-closed: dummy invalid config not rejected');
  return false;
}
