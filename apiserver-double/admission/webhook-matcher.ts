import { matchesLabelSelector } from '../label-selector.js';
import { labelsOf } from './admission-attributes.js';
import type { AdmissionAttributes } from './admission-attributes.js';
import type { AdmissionWebhook, WebhookRule } from './webhook-configuration.js';

/**
 * Whether kube would call `webhook` for the request: a rule matches, then the namespace and object
 * selectors do. `namespaceLabels` are the labels of the request's namespace ({} when it is missing).
 * matchPolicy is taken as Exact: the double serves each kind at one version.
 */
export function webhookApplies(webhook: AdmissionWebhook, request: AdmissionAttributes, namespaceLabels: Record<string, string>): boolean {
  return (
    webhook.rules.some((rule) => ruleMatches(rule, request)) &&
    namespaceSelectorMatches(webhook, request, namespaceLabels) &&
    objectSelectorMatches(webhook, request)
  );
}

function ruleMatches(rule: WebhookRule, request: AdmissionAttributes): boolean {
  const listed = (values: string[], value: string): boolean => values.includes('*') || values.includes(value);
  if (!listed(rule.operations, request.operation)) return false;
  if (!listed(rule.apiGroups, request.group) || !listed(rule.apiVersions, request.version)) return false;
  if (rule.scope === 'Cluster' && request.namespaced) return false;
  if (rule.scope === 'Namespaced' && !request.namespaced) return false;
  return rule.resources.some((entry) => resourceMatches(entry, request.resource, request.subresource));
}

/** `*` is every resource, `*\/*` every resource and subresource, `pods/*` every subresource of pods, `*\/scale` every scale. */
function resourceMatches(entry: string, resource: string, subresource: string): boolean {
  const [entryResource = '', entrySubresource] = entry.split('/', 2);
  if (entrySubresource === undefined) return subresource === '' && (entryResource === '*' || entryResource === resource);
  if (subresource === '') return false;
  return (entryResource === '*' || entryResource === resource) && (entrySubresource === '*' || entrySubresource === subresource);
}

function namespaceSelectorMatches(webhook: AdmissionWebhook, request: AdmissionAttributes, namespaceLabels: Record<string, string>): boolean {
  // kube matches a Namespace against its own labels and ignores the selector for other cluster-scoped kinds.
  if (request.group === '' && request.resource === 'namespaces' && request.subresource === '') {
    return (
      matchesLabelSelector(webhook.namespaceSelector, labelsOf(request.object)) || matchesLabelSelector(webhook.namespaceSelector, labelsOf(request.oldObject))
    );
  }
  if (!request.namespaced) return true;
  return matchesLabelSelector(webhook.namespaceSelector, namespaceLabels);
}

function objectSelectorMatches(webhook: AdmissionWebhook, request: AdmissionAttributes): boolean {
  if (matchesLabelSelector(webhook.objectSelector, labelsOf(request.object))) return true;
  return request.oldObject !== undefined && matchesLabelSelector(webhook.objectSelector, labelsOf(request.oldObject));
}
