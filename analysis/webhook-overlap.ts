import type { V1LabelSelector, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { LABELS, selectorMatches } from '../names/index.js';
import { analysisMessage, type AnalysisMessage } from './messages.js';

/**
 * The reference's webhook analysis (MSH0139): every combination of the labels injection looks at
 * (the namespace's `mesh-injection`, the pod's `sidecar.mesh.io/inject`, and `mesh.io/rev` set to
 * each revision any injector names) must select at most one injection webhook; every webhook of a
 * combination selected by more is reported, naming the others.
 */
export function webhookOverlaps(configurations: readonly V1MutatingWebhookConfiguration[]): AnalysisMessage[] {
  const webhooks: { id: string; configuration: string; namespaceSelector?: V1LabelSelector; objectSelector?: V1LabelSelector }[] = [];
  const revisions = new Set<string>();
  for (const configuration of configurations) {
    const named = revisionsOf(configuration);
    if (named.length === 0 && !(configuration.webhooks ?? []).some((w) => w.name.endsWith('mesh.io'))) continue;
    for (const revision of named) revisions.add(revision);
    const name = configuration.metadata?.name ?? '';
    for (const webhook of configuration.webhooks ?? []) {
      webhooks.push({
        id: `${name}/${webhook.name}`,
        configuration: name,
        ...(webhook.namespaceSelector ? { namespaceSelector: webhook.namespaceSelector } : {}),
        ...(webhook.objectSelector ? { objectSelector: webhook.objectSelector } : {}),
      });
    }
  }
  const withRevisions = (base: Record<string, string>[]): Record<string, string>[] => [
    ...base,
    ...[...revisions].flatMap((revision) => base.map((labels) => ({ ...labels, [LABELS.revision]: revision }))),
  ];
  const namespaceLabels = withRevisions([{}, { [LABELS.namespaceInjection]: 'enabled' }, { [LABELS.namespaceInjection]: 'disabled' }]);
  const objectLabels = withRevisions([{}, { [LABELS.inject]: 'true' }, { [LABELS.inject]: 'false' }]);
  const overlaps = new Map<string, Set<string>>();
  for (const namespace of namespaceLabels) {
    for (const object of objectLabels) {
      const matched = webhooks.filter((w) => selectorMatches(w.namespaceSelector, namespace) && selectorMatches(w.objectSelector, object));
      if (matched.length < 2) continue;
      for (const webhook of matched) {
        const others = overlaps.get(webhook.id) ?? new Set<string>();
        for (const other of matched) if (other.id !== webhook.id) others.add(other.id);
        overlaps.set(webhook.id, others);
      }
    }
  }
  return [...overlaps].map(([id, others]) =>
    analysisMessage(
      'InvalidWebhook',
      `MutatingWebhookConfiguration ${id.slice(0, id.indexOf('/'))}`,
      `Webhook overlaps with others: [${[...others].sort().join(' ')}]. This may cause injection to occur twice.`,
    ),
  );
}

function revisionsOf(configuration: V1MutatingWebhookConfiguration): string[] {
  const found = new Set<string>();
  const label = configuration.metadata?.labels?.[LABELS.revision];
  if (label !== undefined) found.add(label);
  for (const webhook of configuration.webhooks ?? []) {
    for (const selector of [webhook.namespaceSelector, webhook.objectSelector]) {
      const value = selector?.matchLabels?.[LABELS.revision];
      if (value !== undefined) found.add(value);
      for (const expression of selector?.matchExpressions ?? []) if (expression.key === LABELS.revision) for (const v of expression.values ?? []) found.add(v);
    }
  }
  return [...found];
}
