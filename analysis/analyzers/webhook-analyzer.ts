import type { Analyzer } from '../analyzer.js';
import { webhookOverlaps } from '../webhook-overlap.js';

/** MSH0139: injection webhooks whose selectors overlap, so that a pod could be injected twice. */
export const webhookAnalyzer: Analyzer = {
  name: 'webhook.Analyzer',
  description: 'Checks the validity of the mesh injection webhooks: no two may select the same pod',
  inputs: ['MutatingWebhookConfiguration'],
  analyze(context) {
    const resources = context.read('MutatingWebhookConfiguration');
    for (const message of webhookOverlaps(resources.map((r) => r.object))) {
      const resource = resources.find((r) => message.origin === `MutatingWebhookConfiguration ${r.name}`);
      context.report(message.type, resource, message.message);
    }
  },
};
