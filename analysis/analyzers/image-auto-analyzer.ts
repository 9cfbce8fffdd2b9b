import type { V1MutatingWebhook, V1PodSpec } from '@kubernetes/client-node';
import { PROXY_CONTAINER, selectorMatches } from '../../names/index.js';
import type { Analyzer } from '../analyzer.js';
import { labelsOf } from './kube-objects.js';

/** The image a manifest gives the proxy container for injection to fill in (gateways are deployed so). */
const AUTO_IMAGE = 'auto';

function hasAutoImage(spec: V1PodSpec | undefined): boolean {
  return (spec?.containers ?? []).some((container) => container.name === PROXY_CONTAINER && container.image === AUTO_IMAGE);
}

/** The mesh's injection webhooks: those whose name ends in `mesh.io`, as the reference takes those ending in its domain. */
function meshWebhooks(configurations: readonly { object: { webhooks?: V1MutatingWebhook[] } }[]): V1MutatingWebhook[] {
  return configurations.flatMap((configuration) => (configuration.object.webhooks ?? []).filter((webhook) => webhook.name.endsWith('mesh.io')));
}

/**
 * MSH0147: a Pod whose proxy container has `image: auto`: it was not injected (injection replaces
 * the image), so it cannot start, whatever the webhooks select. MSH0146: a Deployment with
 * `image: auto` whose pods no mesh webhook selects (its namespace's labels, none when the
 * namespace is not in the snapshot, and the template's labels).
 */
export const imageAutoAnalyzer: Analyzer = {
  name: 'injection.ImageAutoAnalyzer',
  description: 'Makes sure that Pods and Deployments with `image: auto` are going to be injected',
  inputs: ['Namespace', 'Pod', 'Deployment', 'MutatingWebhookConfiguration'],
  analyze(context) {
    const webhooks = meshWebhooks(context.read('MutatingWebhookConfiguration'));
    const namespaces = new Map(context.read('Namespace').map((namespace) => [namespace.name, labelsOf(namespace.object)]));
    for (const pod of context.read('Pod')) {
      if (!hasAutoImage(pod.object.spec)) continue;
      context.report(
        'ImageAutoWithoutInjectionError',
        pod,
        `Pod ${pod.name} contains \`image: auto\` but does not match any mesh injection webhook selectors.`,
      );
    }
    for (const deployment of context.read('Deployment')) {
      const template = deployment.object.spec?.template;
      if (!hasAutoImage(template?.spec)) continue;
      const namespaceLabels = namespaces.get(deployment.namespace === '' ? 'default' : deployment.namespace) ?? {};
      const podLabels = template?.metadata?.labels ?? {};
      if (webhooks.some((webhook) => selectorMatches(webhook.namespaceSelector, namespaceLabels) && selectorMatches(webhook.objectSelector, podLabels)))
        continue;
      const message = `Deployment ${deployment.name} contains \`image: auto\` but does not match any mesh injection webhook selectors.`;
      context.report('ImageAutoWithoutInjectionWarning', deployment, message);
    }
  },
};
