import { randomUUID } from 'node:crypto';
import { errorMessage, type KubeObject } from '../../runtime/index.js';
import { applyJsonPatch } from '../json-patch.js';
import { isPlainObject } from '../object-util.js';
import type { JsonObject } from '../object-util.js';
import { StatusError } from '../status-error.js';
import type { StatusReason } from '../status-error.js';
import { labelsOf } from './admission-attributes.js';
import type { AdmissionAttributes } from './admission-attributes.js';
import { buildAdmissionReview, chooseReviewVersion, InvalidReviewResponse, readAdmissionResponse } from './admission-review.js';
import type { WebhookVerdict } from './admission-review.js';
import { postToWebhook, WebhookCallError } from './webhook-caller.js';
import type { WebhookServiceResolver } from './webhook-caller.js';
import { webhooksOf } from './webhook-configuration.js';
import type { AdmissionPhase, AdmissionWebhook } from './webhook-configuration.js';
import { webhookApplies } from './webhook-matcher.js';

/** What the chain reads from the cluster: the stored configurations and namespaces. */
export interface AdmissionSources {
  webhookConfigurations(phase: AdmissionPhase): KubeObject[];
  namespace(name: string): KubeObject | undefined;
}

/** A refusal, with the warnings gathered before it (the client sees both). */
export class AdmissionRejection extends StatusError {
  warnings: string[] = [];
}

export interface AdmissionOutcome {
  /** The object after every mutating webhook's patch. */
  object: JsonObject;
  warnings: string[];
}

/**
 * kube-apiserver's MutatingAdmissionWebhook then ValidatingAdmissionWebhook plugins: mutating
 * webhooks one after another, each seeing the previous one's patch, then validating webhooks in
 * parallel. reinvocationPolicy is ignored: no webhook is called twice.
 */
export class AdmissionChain {
  constructor(
    private readonly sources: AdmissionSources,
    private readonly resolveService: WebhookServiceResolver | undefined,
  ) {}

  /** Whether any webhook configuration is stored; without one, writes skip admission altogether. */
  hasConfigurations(): boolean {
    return this.sources.webhookConfigurations('mutating').length > 0 || this.sources.webhookConfigurations('validating').length > 0;
  }

  /** Throws an `AdmissionRejection` when a webhook denies the request or fails closed. */
  async admit(request: AdmissionAttributes): Promise<AdmissionOutcome> {
    const namespaceLabels = request.namespaced ? labelsOf(this.sources.namespace(request.namespace) as JsonObject | undefined) : {};
    const applicable = (phase: AdmissionPhase): AdmissionWebhook[] =>
      webhooksOf(phase, this.sources.webhookConfigurations(phase)).filter((w) => webhookApplies(w, request, namespaceLabels));
    const warnings: string[] = [];
    let object = request.object;
    try {
      for (const webhook of applicable('mutating')) {
        const verdict = await this.call(webhook, { ...request, object });
        if (!verdict) continue;
        warnings.push(...verdict.warnings);
        if (!verdict.allowed) throw denial(webhook, verdict, request);
        if (verdict.patch !== undefined) object = patched(webhook, object, verdict.patch);
      }
      const validating = applicable('validating');
      const verdicts = await Promise.allSettled(validating.map((webhook) => this.call(webhook, { ...request, object })));
      let failure: unknown;
      verdicts.forEach((settled, i) => {
        const webhook = validating[i] as AdmissionWebhook;
        if (settled.status === 'rejected') failure ??= settled.reason;
        else if (settled.value) {
          warnings.push(...settled.value.warnings);
          if (!settled.value.allowed) failure ??= denial(webhook, settled.value, request);
        }
      });
      if (failure !== undefined) throw failure;
    } catch (err) {
      if (err instanceof AdmissionRejection) err.warnings = [...new Set(warnings)];
      throw err;
    }
    return { object, warnings: [...new Set(warnings)] };
  }

  /** One webhook's verdict; `undefined` when its call failed and its failurePolicy is Ignore. */
  private async call(webhook: AdmissionWebhook, request: AdmissionAttributes): Promise<WebhookVerdict | undefined> {
    if (request.dryRun && webhook.sideEffects !== undefined && webhook.sideEffects !== 'None' && webhook.sideEffects !== 'NoneOnDryRun') {
      throw new AdmissionRejection(400, 'BadRequest', `admission webhook "${webhook.name}" does not support dry run`);
    }
    try {
      const version = chooseReviewVersion(webhook.admissionReviewVersions);
      if (!version) throw new WebhookCallError(`webhook does not accept known AdmissionReview versions: ${webhook.admissionReviewVersions.join(', ')}`);
      const uid = randomUUID();
      const answer = await postToWebhook(webhook.clientConfig, buildAdmissionReview(version, uid, request), webhook.timeoutSeconds, this.resolveService);
      try {
        return readAdmissionResponse(answer, version, uid, webhook.phase);
      } catch (err) {
        if (err instanceof InvalidReviewResponse) throw new WebhookCallError(`received invalid webhook response: ${err.message}`);
        throw err;
      }
    } catch (err) {
      if (!(err instanceof WebhookCallError)) throw err;
      if (webhook.failurePolicy === 'Ignore') return undefined;
      const message = `Internal error occurred: failed calling webhook "${webhook.name}": ${err.message}`;
      throw new AdmissionRejection(500, 'InternalError', message, { causes: [{ message: `failed calling webhook "${webhook.name}": ${err.message}` }] });
    }
  }
}

function patched(webhook: AdmissionWebhook, object: JsonObject, patch: unknown): JsonObject {
  let result: unknown;
  try {
    result = applyJsonPatch(object, patch);
  } catch (err) {
    throw new AdmissionRejection(
      500,
      'InternalError',
      `Internal error occurred: admission webhook "${webhook.name}" returned a patch that does not apply: ${errorMessage(err)}`,
    );
  }
  if (!isPlainObject(result))
    throw new AdmissionRejection(500, 'InternalError', `Internal error occurred: admission webhook "${webhook.name}" patched the object into a non-object`);
  return result;
}

/** kube's ToStatusErr: code 0 becomes 403, the message names the webhook and the object. */
function denial(webhook: AdmissionWebhook, verdict: WebhookVerdict, request: AdmissionAttributes): AdmissionRejection {
  const status = verdict.status ?? {};
  const code = typeof status['code'] === 'number' && status['code'] !== 0 ? status['code'] : 403;
  const deniedBy = `admission webhook "${webhook.name}" denied the request`;
  const message = typeof status['message'] === 'string' && status['message'] !== '' ? status['message'] : '';
  const reasonText = typeof status['reason'] === 'string' ? status['reason'] : '';
  const explanation = message ? `${deniedBy}: ${message}` : reasonText ? `${deniedBy}: ${reasonText}` : `${deniedBy} without explanation`;
  const name = request.name || 'Unknown';
  const groupResource = request.group ? `${request.resource}.${request.group}` : request.resource;
  const prefix = code === 500 ? 'Internal error occurred' : `${groupResource} "${name}" is forbidden`;
  const reason = (reasonText || (code === 500 ? 'InternalError' : 'Forbidden')) as StatusReason;
  const details = isPlainObject(status['details'])
    ? status['details']
    : code === 500
      ? { causes: [{ message: explanation }] }
      : { name, group: request.group, kind: request.resource };
  return new AdmissionRejection(code, reason, `${prefix}: ${explanation}`, details);
}
