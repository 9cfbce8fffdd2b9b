import { StatusError } from './status-error.js';
import type { JsonObject } from './object-util.js';

/** Content type of Kubernetes protobuf bodies (`k8s\0` magic, then a runtime.Unknown envelope). */
export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';

type FieldKind =
  | 'string'
  | 'bytes'
  | 'int'
  /** An optional int whose zero is a value (DeleteOptions.gracePeriodSeconds: 0 means now). */
  | 'optional-int'
  | 'bool'
  | 'time'
  | { message: Schema }
  | { map: 'string' | 'bytes' }
  | { repeated: 'string' | { message: Schema } };

type Schema = Record<number, [string, FieldKind]>;

const OWNER_REFERENCE: Schema = {
  1: ['kind', 'string'],
  3: ['name', 'string'],
  4: ['uid', 'string'],
  5: ['apiVersion', 'string'],
  6: ['controller', 'bool'],
  7: ['blockOwnerDeletion', 'bool'],
};

const OBJECT_META: Schema = {
  1: ['name', 'string'],
  2: ['generateName', 'string'],
  3: ['namespace', 'string'],
  5: ['uid', 'string'],
  6: ['resourceVersion', 'string'],
  7: ['generation', 'int'],
  8: ['creationTimestamp', 'time'],
  11: ['labels', { map: 'string' }],
  12: ['annotations', { map: 'string' }],
  13: ['ownerReferences', { repeated: { message: OWNER_REFERENCE } }],
  14: ['finalizers', { repeated: 'string' }],
};

const META: [string, FieldKind] = ['metadata', { message: OBJECT_META }];
const OBJECT_REFERENCE: Schema = {
  1: ['kind', 'string'],
  2: ['namespace', 'string'],
  3: ['name', 'string'],
  4: ['uid', 'string'],
  5: ['apiVersion', 'string'],
  6: ['resourceVersion', 'string'],
  7: ['fieldPath', 'string'],
};

/** meta/v1 DeleteOptions (k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto), the body of helm's and kubectl's deletes. */
const DELETE_OPTIONS: Schema = {
  1: ['gracePeriodSeconds', 'optional-int'],
  2: ['preconditions', { message: { 1: ['uid', 'string'], 2: ['resourceVersion', 'string'] } }],
  3: ['orphanDependents', 'bool'],
  4: ['propagationPolicy', 'string'],
  5: ['dryRun', { repeated: 'string' }],
  6: ['ignoreStoreReadErrorWithClusterBreakingPotential', 'bool'],
};

/** The kinds typed clients send as protobuf (`kubectl create <kind>`, helm's deletes), by `apiVersion/kind`. */
const SCHEMAS: Record<string, Schema> = {
  'v1/DeleteOptions': DELETE_OPTIONS,
  'meta.k8s.io/v1/DeleteOptions': DELETE_OPTIONS,
  'v1/Namespace': { 1: META, 2: ['spec', { message: { 1: ['finalizers', { repeated: 'string' }] } }] },
  'v1/ConfigMap': { 1: META, 2: ['data', { map: 'string' }], 3: ['binaryData', { map: 'bytes' }], 4: ['immutable', 'bool'] },
  'v1/Secret': { 1: META, 2: ['data', { map: 'bytes' }], 3: ['type', 'string'], 4: ['stringData', { map: 'string' }], 5: ['immutable', 'bool'] },
  'v1/ServiceAccount': {
    1: META,
    2: ['secrets', { repeated: { message: OBJECT_REFERENCE } }],
    3: ['imagePullSecrets', { repeated: { message: { 1: ['name', 'string'] } } }],
    4: ['automountServiceAccountToken', 'bool'],
  },
  'authentication.k8s.io/v1/TokenRequest': {
    1: META,
    2: [
      'spec',
      {
        message: {
          1: ['audiences', { repeated: 'string' }],
          3: ['boundObjectRef', { message: { 1: ['kind', 'string'], 2: ['apiVersion', 'string'], 3: ['name', 'string'], 4: ['uid', 'string'] } }],
          4: ['expirationSeconds', 'int'],
        },
      },
    ],
  },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': {
    1: META,
    2: [
      'spec',
      {
        message: {
          1: [
            'resourceAttributes',
            {
              message: {
                1: ['namespace', 'string'],
                2: ['verb', 'string'],
                3: ['group', 'string'],
                4: ['version', 'string'],
                5: ['resource', 'string'],
                6: ['subresource', 'string'],
                7: ['name', 'string'],
              },
            },
          ],
          2: ['nonResourceAttributes', { message: { 1: ['path', 'string'], 2: ['verb', 'string'] } }],
        },
      },
    ],
  },
};

interface WireField {
  number: number;
  wireType: number;
  varint?: bigint;
  bytes?: Buffer;
}

/**
 * Decodes the protobuf bodies typed clients (kubectl create namespace/secret/configmap/
 * serviceaccount/token, auth can-i; the DeleteOptions of helm uninstall) send into their JSON form. Other kinds are refused with 415.
 */
export function decodeProtobufBody(body: Buffer): JsonObject {
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\u0000') throw unsupported('the protobuf body lacks the k8s envelope');
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  for (const field of readFields(body.subarray(4))) {
    if (field.number === 1 && field.bytes) {
      for (const meta of readFields(field.bytes)) {
        if (meta.number === 1 && meta.bytes) apiVersion = meta.bytes.toString('utf8');
        if (meta.number === 2 && meta.bytes) kind = meta.bytes.toString('utf8');
      }
    } else if (field.number === 2 && field.bytes) {
      raw = field.bytes;
    }
  }
  const schema = SCHEMAS[`${apiVersion}/${kind}`];
  if (!schema) throw unsupported(`protobuf bodies of ${apiVersion}/${kind} are not understood; send JSON`);
  return { apiVersion, kind, ...decodeMessage(raw ?? Buffer.alloc(0), schema) };
}

function unsupported(message: string): StatusError {
  return new StatusError(415, 'UnsupportedMediaType', message);
}

function decodeMessage(buffer: Buffer, schema: Schema): JsonObject {
  const out: JsonObject = {};
  for (const field of readFields(buffer)) {
    const spec = schema[field.number];
    if (!spec) continue;
    const [name, kind] = spec;
    const value = decodeValue(field, kind);
    if (typeof kind === 'object' && 'repeated' in kind) {
      if (value !== undefined) out[name] = [...((out[name] as unknown[] | undefined) ?? []), value];
    } else if (typeof kind === 'object' && 'map' in kind) {
      const entry = value as [string, unknown] | undefined;
      if (entry) out[name] = { ...((out[name] as JsonObject | undefined) ?? {}), [entry[0]]: entry[1] };
    } else if (kind === 'optional-int' || !isEmpty(value)) {
      out[name] = value;
    }
  }
  return out;
}

function decodeValue(field: WireField, kind: FieldKind): unknown {
  if (kind === 'string') return field.bytes?.toString('utf8') ?? '';
  if (kind === 'bytes') return field.bytes?.toString('base64') ?? '';
  if (kind === 'int' || kind === 'optional-int') return Number(BigInt.asIntN(64, field.varint ?? 0n));
  if (kind === 'bool') return field.varint !== undefined && field.varint !== 0n;
  if (kind === 'time') {
    let seconds = 0n;
    for (const part of readFields(field.bytes ?? Buffer.alloc(0))) if (part.number === 1) seconds = part.varint ?? 0n;
    return seconds === 0n ? undefined : new Date(Number(seconds) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  if ('message' in kind) return decodeMessage(field.bytes ?? Buffer.alloc(0), kind.message);
  if ('repeated' in kind) {
    return kind.repeated === 'string' ? (field.bytes?.toString('utf8') ?? '') : decodeMessage(field.bytes ?? Buffer.alloc(0), kind.repeated.message);
  }
  let key = '';
  let value: unknown = kind.map === 'bytes' ? '' : '';
  for (const part of readFields(field.bytes ?? Buffer.alloc(0))) {
    if (part.number === 1) key = part.bytes?.toString('utf8') ?? '';
    if (part.number === 2) value = kind.map === 'bytes' ? (part.bytes?.toString('base64') ?? '') : (part.bytes?.toString('utf8') ?? '');
  }
  return [key, value];
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === '' ||
    value === 0 ||
    value === false ||
    (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)
  );
}

function readFields(buffer: Buffer): WireField[] {
  const fields: WireField[] = [];
  let offset = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (offset >= buffer.length) throw unsupported('truncated protobuf body');
      const byte = buffer[offset++] as number;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (offset < buffer.length) {
    const tag = varint();
    const number = Number(tag >> 3n);
    const wireType = Number(tag & 7n);
    if (wireType === 0) fields.push({ number, wireType, varint: varint() });
    else if (wireType === 2) {
      const length = Number(varint());
      if (offset + length > buffer.length) throw unsupported('truncated protobuf body');
      fields.push({ number, wireType, bytes: buffer.subarray(offset, offset + length) });
      offset += length;
    } else if (wireType === 1) offset += 8;
    else if (wireType === 5) offset += 4;
    else throw unsupported(`unsupported protobuf wire type ${wireType}`);
  }
  return fields;
}
