import { errorMessage } from '../runtime/index.js';
/** The AdmissionReview versions the API server may send; a response is written in the request's. */
export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export type AdmissionReviewVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** The part of `request` the webhooks read. */
export interface AdmissionRequest {
  readonly uid: string;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly name: string;
  readonly namespace: string;
  readonly operation: string;
  readonly object: unknown;
  readonly dryRun: boolean;
}

export interface AdmissionResponse {
  readonly allowed: boolean;
  /** Why a request is denied: `result` in the reference, `status` on the wire. */
  readonly message?: string;
  readonly warnings?: readonly string[];
  /** RFC 6902 operations for the API server to apply (mutating webhooks only). */
  readonly patch?: readonly unknown[];
  /** `patch` already encoded for the wire (base64 of its JSON), when the route keeps it so (a cached answer). */
  readonly encodedPatch?: string;
}

export type DecodedReview = { readonly version: AdmissionReviewVersion; readonly request: AdmissionRequest } | { readonly error: string };

/**
 * Reads an AdmissionReview of either version. What cannot be read is answered as a denial by
 * the caller, never with an HTTP error, as the reference does.
 */
export function decodeAdmissionReview(body: string): DecodedReview {
  let review: unknown;
  try {
    review = JSON.parse(body);
  } catch (error) {
    return { error: `could not decode body: ${errorMessage(error)}` };
  }
  if (!isRecord(review)) return { error: 'could not decode body: expected an AdmissionReview object' };
  const { apiVersion, kind, request } = review;
  if (apiVersion !== ADMISSION_V1 && apiVersion !== ADMISSION_V1BETA1) {
    return { error: `could not decode body: unsupported apiVersion ${JSON.stringify(apiVersion)}: want ${ADMISSION_V1} or ${ADMISSION_V1BETA1}` };
  }
  if (kind !== 'AdmissionReview') return { error: `could not decode body: unexpected kind ${JSON.stringify(kind)}: want AdmissionReview` };
  if (!isRecord(request)) return { error: 'could not decode body: the AdmissionReview has no request' };
  return {
    version: apiVersion,
    request: {
      uid: stringOf(request['uid']),
      kind: {
        group: stringOf(fieldOf(request['kind'], 'group')),
        version: stringOf(fieldOf(request['kind'], 'version')),
        kind: stringOf(fieldOf(request['kind'], 'kind')),
      },
      resource: {
        group: stringOf(fieldOf(request['resource'], 'group')),
        version: stringOf(fieldOf(request['resource'], 'version')),
        resource: stringOf(fieldOf(request['resource'], 'resource')),
      },
      name: stringOf(request['name']),
      namespace: stringOf(request['namespace']),
      operation: stringOf(request['operation']),
      object: request['object'],
      dryRun: request['dryRun'] === true,
    },
  };
}

/** The review answering `uid`, in `version` (v1 when the request could not be read). */
export function encodeAdmissionReview(version: AdmissionReviewVersion, uid: string, response: AdmissionResponse): string {
  const wire: Record<string, unknown> = { uid, allowed: response.allowed };
  if (response.message !== undefined) wire['status'] = { message: response.message };
  if (response.warnings && response.warnings.length > 0) wire['warnings'] = response.warnings;
  const review = JSON.stringify({ apiVersion: version, kind: 'AdmissionReview', response: wire });
  if (!response.patch) return review;
  // The patch goes last, as is: base64 needs no escaping, and the review's JSON need not scan it.
  const patch = response.encodedPatch ?? encodePatch(response.patch);
  return `${review.slice(0, -2)},"patchType":"JSONPatch","patch":"${patch}"}}`;
}

/** A JSON patch as an AdmissionReview carries it: base64 of its JSON. */
export function encodePatch(patch: readonly unknown[]): string {
  return Buffer.from(JSON.stringify(patch)).toString('base64');
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fieldOf(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
