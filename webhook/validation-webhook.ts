import { KINDS, KIND_NAMES, validateResource, type KindName, type ValidationIssue } from '../crds/index.js';
import { ALWAYS_REJECT_ANNOTATION } from '../names/index.js';
import type { Logger, MeshMetrics } from '../runtime/index.js';
import type { AdmissionRoute } from './admission-http.js';
import { isRecord, type AdmissionRequest, type AdmissionResponse } from './admission-review.js';

/** Why a request was not counted as passed: the reference's `reason` label values. */
export type ValidationFailure = 'unsupported_operation' | 'yaml_decode_error' | 'unknown_type' | 'crd_conversion_error' | 'invalid_resource';

const TOP_LEVEL_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'spec', 'status']);

export interface ValidationWebhookOptions {
  readonly metrics: MeshMetrics<'pilot-discovery'>;
  readonly log: Logger;
}

/**
 * `/validate`: every mesh kind through the validators `meshctl validate` uses. CREATE and UPDATE
 * are checked, anything else is allowed; a denial lists every problem as
 * `configuration is invalid: <path>: <why>; …`; warnings go back in `response.warnings`, which
 * `kubectl` prints.
 */
export function newValidationRoute(options: ValidationWebhookOptions): AdmissionRoute {
  const { metrics, log } = options;
  const httpErrors = metrics.counter('galley_validation_http_error');
  return {
    onHttpError: (status) => httpErrors.inc({ status: String(status) }),
    handle: (request) => {
      const resource = { group: request.resource.group, version: request.resource.version, resource: request.resource.resource };
      const outcome = validateRequest(request);
      if (outcome.failure) metrics.counter('galley_validation_failed').inc({ ...resource, reason: outcome.failure });
      else metrics.counter('galley_validation_passed').inc(resource);
      if (!outcome.response.allowed && !isProbe(request.object)) {
        log.info(
          {
            kind: request.kind.kind,
            namespace: request.namespace,
            name: request.name,
            dryRun: request.dryRun,
            reason: outcome.failure,
            message: outcome.response.message,
          },
          'configuration rejected',
        );
      }
      return outcome.response;
    },
  };
}

/** The verdict on one request, with the metric reason when it did not pass. */
export function validateRequest(request: AdmissionRequest): { response: AdmissionResponse; failure?: ValidationFailure } {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') {
    return { response: { allowed: true }, failure: 'unsupported_operation' };
  }
  const object = request.object;
  if (!isRecord(object)) {
    return { response: { allowed: false, message: 'cannot decode configuration: the request has no object' }, failure: 'yaml_decode_error' };
  }
  const kind = kindOf(object, request);
  if (!kind) {
    return { response: { allowed: false, message: `unrecognized type ${String(object['kind'] ?? request.kind.kind)}` }, failure: 'unknown_type' };
  }
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  // The API server fills the namespace from the URL before admission; a direct caller may not.
  const withNamespace = metadata['namespace'] === undefined && request.namespace !== '' ? { ...metadata, namespace: request.namespace } : metadata;
  const known = Object.fromEntries(Object.entries(object).filter(([key]) => TOP_LEVEL_FIELDS.has(key)));
  const result = validateResource({ ...known, metadata: withNamespace });
  if (result.errors.length > 0) {
    return { response: { allowed: false, message: `configuration is invalid: ${result.errors.map(renderIssue).join('; ')}` }, failure: 'invalid_resource' };
  }
  const unknown = Object.keys(object).find((key) => !TOP_LEVEL_FIELDS.has(key));
  if (unknown !== undefined) {
    const where = `${String(withNamespace['namespace'] ?? '')}/${String(withNamespace['name'] ?? '')}`;
    return { response: { allowed: false, message: `unknown field ${JSON.stringify(unknown)} on ${kind} resource ${where}` }, failure: 'invalid_resource' };
  }
  return { response: { allowed: true, warnings: result.warnings.map(renderIssue) } };
}

/** Looks the kind up by group and kind, ignoring the version, as the reference does. */
function kindOf(object: Record<string, unknown>, request: AdmissionRequest): KindName | undefined {
  const apiVersion = typeof object['apiVersion'] === 'string' ? object['apiVersion'] : '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : request.kind.group;
  const kind = typeof object['kind'] === 'string' ? object['kind'] : request.kind.kind;
  return KIND_NAMES.find((name) => KINDS[name].group === group && name === kind);
}

function renderIssue(issue: ValidationIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

function isProbe(object: unknown): boolean {
  const metadata = isRecord(object) ? object['metadata'] : undefined;
  const annotations = isRecord(metadata) ? metadata['annotations'] : undefined;
  return isRecord(annotations) && annotations[ALWAYS_REJECT_ANNOTATION] !== undefined;
}
