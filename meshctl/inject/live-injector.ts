import { request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { LABELS, revisionLabelValue } from '../../names/index.js';
import { MeshError, errorMessage } from '../../runtime/index.js';
import type { Pod } from '../../webhook/inject/index.js';

const INJECTOR_SUFFIX = 'sidecar-injector.mesh.io';

/** The injection webhook a cluster serves, reached by URL with the roots of its `caBundle`. */
export interface LiveInjector {
  readonly url: string;
  readonly caBundlePem: string | undefined;
  readonly webhook: string;
}

/**
 * Finds the revision's injection webhook as the reference's kube-inject does: the first webhook
 * named `…sidecar-injector.mesh.io` of the MutatingWebhookConfigurations labelled with the
 * revision. Only a `clientConfig.url` is dialled (a service would need a port-forward); anything
 * else says why, and the caller falls back to the ConfigMaps.
 */
export async function findLiveInjector(kubeConfig: KubeConfig, revision: string): Promise<LiveInjector | { reason: string }> {
  const { AdmissionregistrationV1Api } = await import('@kubernetes/client-node');
  const label = `${LABELS.revision}=${revisionLabelValue(revision)}`;
  let configurations;
  try {
    configurations = await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration({ labelSelector: label });
  } catch (error) {
    return { reason: `could not list the injection webhooks: ${errorMessage(error)}` };
  }
  const webhook = configurations.items.flatMap((c) => c.webhooks ?? []).find((w) => w.name.endsWith(INJECTOR_SUFFIX));
  if (!webhook) return { reason: `no MutatingWebhookConfiguration labelled ${label} has a webhook named *${INJECTOR_SUFFIX}` };
  if (!webhook.clientConfig.url) return { reason: `webhook ${webhook.name} is reached through a service, which needs a port-forward` };
  const caBundle = webhook.clientConfig.caBundle;
  return { url: webhook.clientConfig.url, caBundlePem: caBundle ? Buffer.from(caBundle, 'base64').toString() : undefined, webhook: webhook.name };
}

/** Sends one pod template to the webhook as the API server would (AdmissionReview v1, CREATE) and applies its patch. */
export async function injectThroughWebhook(injector: LiveInjector, pod: Pod, namespace: string): Promise<Pod> {
  const body = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'meshctl-orch-inject',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      operation: 'CREATE',
      object: pod,
    },
  });
  const answer = await new Promise<string>((resolve, reject) => {
    const req = request(
      injector.url,
      { method: 'POST', timeout: 5000, headers: { 'content-type': 'application/json' }, ...(injector.caBundlePem ? { ca: injector.caBundlePem } : {}) },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`webhook ${injector.webhook} answered ${res.statusCode ?? 0}: ${text.trim()}`)),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error(`webhook ${injector.webhook} did not answer within 5 s`)));
    req.on('error', reject);
    req.end(body);
  });
  const response = (JSON.parse(answer) as { response?: { allowed?: boolean; patch?: string; status?: { message?: string } } }).response ?? {};
  if (!response.allowed)
    throw new MeshError('webhook-denied', `webhook ${injector.webhook} denied the pod: ${response.status?.message ?? 'without explanation'}`);
  if (!response.patch) return pod;
  const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString()) as Operation[];
  return fastJsonPatch.applyPatch(structuredClone(pod), patch, true, false).newDocument;
}
