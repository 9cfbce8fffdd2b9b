import type { V1LabelSelector, V1MutatingWebhookConfiguration } from '@kubernetes/client-node';
import { LABELS, selectorMatches } from '../../names/index.js';
import { formatTable } from '../kube/table.js';

export interface CheckInjectRow {
  readonly webhook: string;
  readonly revision: string;
  readonly injected: boolean;
  readonly reason: string;
}

/** The requirements of a selector that ask for a label to be present: `key=value` (or `key` for Exists). */
function positiveRequirements(selector: V1LabelSelector | undefined): string[] {
  return [
    ...Object.entries(selector?.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`),
    ...(selector?.matchExpressions ?? []).flatMap((e) =>
      e.operator === 'In' ? (e.values ?? []).map((v) => `${e.key}=${v}`) : e.operator === 'Exists' ? [e.key] : [],
    ),
  ];
}

/** Which of those the labels satisfy. */
function satisfied(requirements: readonly string[], labels: Readonly<Record<string, string>>): string | undefined {
  return requirements.find((requirement) => {
    const [key = '', value] = requirement.split('=');
    return value === undefined ? key in labels : labels[key] === value;
  });
}

/**
 * `meshctl x check-inject`: for each injection webhook configuration, whether it would inject a
 * pod with these labels in a namespace with those, and why (the label that matched, or the labels
 * it would have needed). A pod labelled `sidecar.mesh.io/inject=false` is injected by none.
 */
export function checkInjection(
  configurations: readonly V1MutatingWebhookConfiguration[],
  namespaceLabels: Readonly<Record<string, string>>,
  podLabels: Readonly<Record<string, string>>,
): CheckInjectRow[] {
  const injectors = configurations.filter((c) => (c.webhooks ?? []).some((w) => w.name.endsWith('sidecar-injector.mesh.io')));
  return injectors
    .map((configuration) => {
      const name = configuration.metadata?.name ?? '';
      const labels = configuration.metadata?.labels ?? {};
      const revision = labels[LABELS.tag] ?? labels[LABELS.revision] ?? 'default';
      if (podLabels[LABELS.inject] === 'false')
        return { webhook: name, revision, injected: false, reason: `Pod has ${LABELS.inject}=false label, preventing injection` };
      const hooks = (configuration.webhooks ?? []).filter((w) => w.name.endsWith('sidecar-injector.mesh.io'));
      const hit = hooks.find((w) => selectorMatches(w.namespaceSelector, namespaceLabels) && selectorMatches(w.objectSelector, podLabels));
      if (hit) {
        const byNamespace = satisfied(positiveRequirements(hit.namespaceSelector), namespaceLabels);
        const byPod = satisfied(positiveRequirements(hit.objectSelector), podLabels);
        const reason = byNamespace ? `Namespace label ${byNamespace} matches` : byPod ? `Pod label ${byPod} matches` : 'Webhook selects every pod';
        return { webhook: name, revision, injected: true, reason };
      }
      const wantedNamespace = [...new Set(hooks.flatMap((w) => positiveRequirements(w.namespaceSelector)))];
      const wantedPod = [...new Set(hooks.flatMap((w) => positiveRequirements(w.objectSelector)))];
      return {
        webhook: name,
        revision,
        injected: false,
        reason: `No matching namespace labels (${wantedNamespace.join(', ')}) or pod labels (${wantedPod.join(', ')})`,
      };
    })
    .sort((a, b) => Number(b.injected) - Number(a.injected) || a.webhook.localeCompare(b.webhook));
}

/** `WEBHOOK  REVISION  INJECTED  REASON`, then a warning when several would inject. */
export function renderCheckInject(rows: readonly CheckInjectRow[]): string {
  if (rows.length === 0) return 'No mesh injection webhooks found in the cluster.\n';
  const table = formatTable([['WEBHOOK', 'REVISION', 'INJECTED', 'REASON'], ...rows.map((r) => [r.webhook, r.revision, r.injected ? '✔' : '✘', r.reason])], 2);
  const injecting = rows.filter((r) => r.injected).length;
  return injecting > 1 ? `${table}WARNING: multiple webhooks (${injecting}) would inject this pod: injection may happen twice.\n` : table;
}
