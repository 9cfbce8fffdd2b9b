import { errorMessage, MeshError } from '../../runtime/index.js';
import { isPlainObject } from '../object-util.js';
import type { JsonObject } from '../object-util.js';
import type { AdmissionAttributes } from './admission-attributes.js';
import type { AdmissionPhase } from './webhook-configuration.js';

export type ReviewVersion = 'v1' | 'v1beta1';

const SUPPORTED_VERSIONS: readonly string[] = ['v1', 'v1beta1'];

/** kube sends the first of the webhook's `admissionReviewVersions` that it supports. */
export function chooseReviewVersion(accepted: readonly string[]): ReviewVersion | undefined {
  return accepted.find((v) => SUPPORTED_VERSIONS.includes(v)) as ReviewVersion | undefined;
}

export function buildAdmissionReview(version: ReviewVersion, uid: string, request: AdmissionAttributes): JsonObject {
  const kind = { group: request.group, version: request.version, kind: request.kind };
  const resource = { group: request.group, version: request.version, resource: request.resource };
  const { username, uid: userUid, groups } = request.user;
  return {
    apiVersion: `admission.k8s.io/${version}`,
    kind: 'AdmissionReview',
    request: {
      uid,
      kind,
      resource,
      ...(request.subresource ? { subResource: request.subresource } : {}),
      requestKind: kind,
      requestResource: resource,
      ...(request.subresource ? { requestSubResource: request.subresource } : {}),
      name: request.name,
      ...(request.namespace ? { namespace: request.namespace } : {}),
      operation: request.operation,
      userInfo: { username, ...(userUid ? { uid: userUid } : {}), groups },
      object: request.object,
      oldObject: request.oldObject ?? null,
      dryRun: request.dryRun,
      options: request.options,
    },
  };
}

/** What a webhook answered, once the answer has been checked. */
export interface WebhookVerdict {
  allowed: boolean;
  /** `response.status` of a denial. */
  status: JsonObject | undefined;
  /** The decoded JSON patch of a mutating webhook. */
  patch: unknown;
  warnings: string[];
}

/** A response kube would refuse ("received invalid webhook response: …"). */
export class InvalidReviewResponse extends MeshError<'webhook-response-invalid'> {
  constructor(message: string) {
    super('webhook-response-invalid', message);
  }
}

/** Checks the AdmissionReview a webhook returned, as kube's VerifyAdmissionResponse does. */
export function readAdmissionResponse(body: unknown, version: ReviewVersion, uid: string, phase: AdmissionPhase): WebhookVerdict {
  if (!isPlainObject(body)) throw new InvalidReviewResponse('the response is not a JSON object');
  const expectedApiVersion = `admission.k8s.io/${version}`;
  if (version === 'v1' && (body['apiVersion'] !== expectedApiVersion || body['kind'] !== 'AdmissionReview')) {
    throw new InvalidReviewResponse(
      `expected webhook response of ${expectedApiVersion}, Kind=AdmissionReview, got ${String(body['apiVersion'] ?? '/')}, Kind=${String(body['kind'] ?? '')}`,
    );
  }
  const response = body['response'];
  if (!isPlainObject(response)) throw new InvalidReviewResponse('webhook response was absent');
  const gotUid = typeof response['uid'] === 'string' ? response['uid'] : '';
  if (gotUid !== uid) throw new InvalidReviewResponse(`expected response.uid="${uid}", got "${gotUid}"`);
  const patch = readPatch(response, version, phase);
  return {
    allowed: response['allowed'] === true,
    status: isPlainObject(response['status']) ? response['status'] : undefined,
    patch,
    warnings: Array.isArray(response['warnings']) ? response['warnings'].map(String) : [],
  };
}

function readPatch(response: JsonObject, version: ReviewVersion, phase: AdmissionPhase): unknown {
  const encoded = response['patch'];
  const patchType = response['patchType'];
  if (encoded === undefined || encoded === null || encoded === '') {
    if (version === 'v1' && patchType !== undefined && patchType !== null)
      throw new InvalidReviewResponse('webhook returned response.patchType but not response.patch');
    return undefined;
  }
  if (phase === 'validating') throw new InvalidReviewResponse('validating webhooks may not return patches');
  if (version === 'v1' && (patchType === undefined || patchType === null))
    throw new InvalidReviewResponse('webhook returned response.patch but not response.patchType');
  if (patchType !== undefined && patchType !== null && patchType !== 'JSONPatch') {
    throw new InvalidReviewResponse(`webhook returned invalid response.patchType of "${String(patchType)}"`);
  }
  try {
    return JSON.parse(Buffer.from(String(encoded), 'base64').toString('utf8')) as unknown;
  } catch (err) {
    throw new InvalidReviewResponse(`the patch is not JSON: ${errorMessage(err)}`);
  }
}
