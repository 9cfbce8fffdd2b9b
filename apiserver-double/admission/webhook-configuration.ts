import type { KubeObject } from '../../runtime/index.js';
import type { LabelRequirement } from '../label-selector.js';
import { isPlainObject } from '../object-util.js';
import type { JsonObject } from '../object-util.js';

export type AdmissionPhase = 'mutating' | 'validating';

export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: '*' | 'Cluster' | 'Namespaced';
}

export interface WebhookServiceReference {
  namespace: string;
  name: string;
  port: number;
  path: string;
}

export interface WebhookClientConfig {
  url?: string;
  service?: WebhookServiceReference;
  /** PEM text decoded from `caBundle`; the system roots when absent. */
  caPem?: string;
}

/** One webhook of a Mutating- or ValidatingWebhookConfiguration, with the API server's defaults filled in. */
export interface AdmissionWebhook {
  phase: AdmissionPhase;
  configurationName: string;
  name: string;
  rules: WebhookRule[];
  namespaceSelector: LabelRequirement[];
  objectSelector: LabelRequirement[];
  failurePolicy: 'Fail' | 'Ignore';
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  sideEffects: string | undefined;
  clientConfig: WebhookClientConfig;
}

const DEFAULT_TIMEOUT_SECONDS = 10;
const MAX_TIMEOUT_SECONDS = 30;

/** The webhooks of the stored configurations in kube's calling order: configuration name, then position. */
export function webhooksOf(phase: AdmissionPhase, configurations: readonly KubeObject[]): AdmissionWebhook[] {
  const byName = [...configurations].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  return byName.flatMap((configuration) => {
    const webhooks = (configuration as JsonObject)['webhooks'];
    if (!Array.isArray(webhooks)) return [];
    return webhooks.filter(isPlainObject).map((webhook) => readWebhook(phase, configuration.metadata?.name ?? '', webhook));
  });
}

function readWebhook(phase: AdmissionPhase, configurationName: string, webhook: JsonObject): AdmissionWebhook {
  const timeout = typeof webhook['timeoutSeconds'] === 'number' ? webhook['timeoutSeconds'] : DEFAULT_TIMEOUT_SECONDS;
  return {
    phase,
    configurationName,
    name: String(webhook['name'] ?? ''),
    rules: (Array.isArray(webhook['rules']) ? webhook['rules'] : []).filter(isPlainObject).map(readRule),
    namespaceSelector: selectorRequirements(webhook['namespaceSelector']),
    objectSelector: selectorRequirements(webhook['objectSelector']),
    failurePolicy: webhook['failurePolicy'] === 'Ignore' ? 'Ignore' : 'Fail',
    timeoutSeconds: Math.min(Math.max(1, timeout), MAX_TIMEOUT_SECONDS),
    admissionReviewVersions: strings(webhook['admissionReviewVersions']),
    sideEffects: typeof webhook['sideEffects'] === 'string' ? webhook['sideEffects'] : undefined,
    clientConfig: readClientConfig(isPlainObject(webhook['clientConfig']) ? webhook['clientConfig'] : {}),
  };
}

function readRule(rule: JsonObject): WebhookRule {
  const scope = rule['scope'];
  return {
    operations: strings(rule['operations']),
    apiGroups: strings(rule['apiGroups']),
    apiVersions: strings(rule['apiVersions']),
    resources: strings(rule['resources']),
    scope: scope === 'Cluster' || scope === 'Namespaced' ? scope : '*',
  };
}

function readClientConfig(config: JsonObject): WebhookClientConfig {
  const service = isPlainObject(config['service']) ? config['service'] : undefined;
  const caBundle = typeof config['caBundle'] === 'string' && config['caBundle'] !== '' ? config['caBundle'] : undefined;
  return {
    ...(typeof config['url'] === 'string' ? { url: config['url'] } : {}),
    ...(service
      ? {
          service: {
            namespace: String(service['namespace'] ?? ''),
            name: String(service['name'] ?? ''),
            port: typeof service['port'] === 'number' ? service['port'] : 443,
            path: typeof service['path'] === 'string' ? service['path'] : '/',
          },
        }
      : {}),
    ...(caBundle ? { caPem: Buffer.from(caBundle, 'base64').toString('utf8') } : {}),
  };
}

/** A metav1.LabelSelector (`matchLabels`, `matchExpressions`) as requirements; absent or empty matches everything. */
export function selectorRequirements(selector: unknown): LabelRequirement[] {
  if (!isPlainObject(selector)) return [];
  const requirements: LabelRequirement[] = [];
  if (isPlainObject(selector['matchLabels'])) {
    for (const [key, value] of Object.entries(selector['matchLabels'])) requirements.push({ key, operator: '=', values: [String(value)] });
  }
  for (const expression of (Array.isArray(selector['matchExpressions']) ? selector['matchExpressions'] : []).filter(isPlainObject)) {
    const key = String(expression['key'] ?? '');
    const values = strings(expression['values']);
    switch (expression['operator']) {
      case 'In':
        requirements.push({ key, operator: 'in', values });
        break;
      case 'NotIn':
        requirements.push({ key, operator: 'notin', values });
        break;
      case 'Exists':
        requirements.push({ key, operator: 'exists', values: [] });
        break;
      case 'DoesNotExist':
        requirements.push({ key, operator: 'notexists', values: [] });
        break;
      default:
        // An operator kube would have refused when storing the configuration: match nothing.
        requirements.push({ key, operator: 'in', values: [] });
    }
  }
  return requirements;
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}
