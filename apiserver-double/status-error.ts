import { MeshError } from '../runtime/index.js';

/** The `reason` field of a Kubernetes `Status`. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
  type?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** A `meta/v1 Status` object as the API server writes it. */
export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** An API failure that the HTTP edge renders as a `Status` body with `httpCode`. */
export class StatusError extends MeshError<'api-status'> {
  readonly httpCode: number;
  readonly reason: StatusReason;
  readonly details: StatusDetails | undefined;

  constructor(httpCode: number, reason: StatusReason, message: string, details?: StatusDetails) {
    super('api-status', message);
    this.httpCode = httpCode;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): KubeStatus {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      ...(this.details ? { details: this.details } : {}),
      code: this.httpCode,
    };
  }
}

/** The reason the API server uses for a bare HTTP status code. */
export function reasonForCode(code: number): StatusReason {
  const reasons: Record<number, StatusReason> = {
    400: 'BadRequest',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    406: 'NotAcceptable',
    409: 'Conflict',
    410: 'Gone',
    415: 'UnsupportedMediaType',
    422: 'Invalid',
    429: 'TooManyRequests',
    503: 'ServiceUnavailable',
    504: 'Timeout',
  };
  return reasons[code] ?? 'InternalError';
}

/** `configmaps` for the core group, `leases.coordination.k8s.io` otherwise. */
export function qualifiedResource(group: string, plural: string): string {
  return group ? `${plural}.${group}` : plural;
}

export function notFound(group: string, plural: string, name: string): StatusError {
  return new StatusError(404, 'NotFound', `${qualifiedResource(group, plural)} "${name}" not found`, {
    name,
    ...(group ? { group } : {}),
    kind: plural,
  });
}

export function alreadyExists(group: string, plural: string, name: string): StatusError {
  return new StatusError(409, 'AlreadyExists', `${qualifiedResource(group, plural)} "${name}" already exists`, {
    name,
    ...(group ? { group } : {}),
    kind: plural,
  });
}

export function conflict(group: string, plural: string, name: string, why: string, causes?: StatusCause[]): StatusError {
  return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(group, plural)} "${name}": ${why}`, {
    name,
    ...(group ? { group } : {}),
    kind: plural,
    ...(causes ? { causes } : {}),
  });
}

export const STALE_OBJECT_MESSAGE = 'the object has been modified; please apply your changes to the latest version and try again';

/** One field error of an `Invalid` status. */
export interface FieldError {
  field: string;
  type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueNotSupported' | 'FieldValueDuplicate';
  detail: string;
  value?: unknown;
}

const FIELD_ERROR_TEXT: Record<FieldError['type'], string> = {
  FieldValueRequired: 'Required value',
  FieldValueInvalid: 'Invalid value',
  FieldValueForbidden: 'Forbidden',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueDuplicate: 'Duplicate value',
};

export function invalid(group: string, kind: string, name: string, errors: FieldError[]): StatusError {
  const texts = errors.map((e) => {
    const value = e.value === undefined ? '' : `${JSON.stringify(e.value)}: `;
    return `${e.field}: ${FIELD_ERROR_TEXT[e.type]}: ${value}${e.detail}`;
  });
  const joined = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${group ? `${kind}.${group}` : kind} "${name}" is invalid: ${joined}`, {
    name,
    ...(group ? { group } : {}),
    kind,
    causes: errors.map((e, i) => ({ reason: e.type, message: texts[i] ?? e.detail, field: e.field })),
  });
}

export function badRequest(message: string): StatusError {
  return new StatusError(400, 'BadRequest', message);
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): StatusError {
  return new StatusError(405, 'MethodNotAllowed', message);
}

export function resourceNotServed(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource');
}

export function gone(message: string): StatusError {
  return new StatusError(410, 'Expired', message);
}
