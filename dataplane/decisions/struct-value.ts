import { structToJson, type StructMessage } from '../../xds/envoy/index.js';

/**
 * A `google.protobuf.Struct` as the data plane reads it: decoded from the wire it arrives as
 * `{ fields: { k: { string_value } } }`; written by hand it may already be plain JSON.
 */
export function structValue(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object') return {};
  const keys = Object.keys(value);
  const fields = (value as { fields?: unknown }).fields;
  if (keys.length === 1 && fields !== null && typeof fields === 'object') return structToJson(value as StructMessage) as Record<string, unknown>;
  if (keys.length === 0) return {};
  return value as Record<string, unknown>;
}
