/**
 * `google.protobuf.Struct` as grpc-js hands it over (`{ fields: { k: { string_value: 'v' } } }`)
 * to plain JSON, and back.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface StructMessage {
  fields?: Record<string, ValueMessage> | null;
}

export interface ValueMessage {
  kind?: string | null;
  null_value?: unknown;
  number_value?: number | null;
  string_value?: string | null;
  bool_value?: boolean | null;
  struct_value?: StructMessage | null;
  list_value?: { values?: ValueMessage[] | null } | null;
}

export function structToJson(struct: StructMessage | null | undefined): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const [key, value] of Object.entries(struct?.fields ?? {})) out[key] = valueToJson(value);
  return out;
}

export function valueToJson(value: ValueMessage | null | undefined): JsonValue {
  if (!value) return null;
  const kind = value.kind ?? memberSet(value);
  switch (kind) {
    case 'number_value':
      return value.number_value ?? 0;
    case 'string_value':
      return value.string_value ?? '';
    case 'bool_value':
      return value.bool_value ?? false;
    case 'struct_value':
      return structToJson(value.struct_value);
    case 'list_value':
      return (value.list_value?.values ?? []).map(valueToJson);
    default:
      return null;
  }
}

export function jsonToStruct(json: Record<string, JsonValue>): StructMessage {
  const fields: Record<string, ValueMessage> = {};
  for (const [key, value] of Object.entries(json)) fields[key] = jsonToValue(value);
  return { fields };
}

export function jsonToValue(value: JsonValue): ValueMessage {
  if (value === null) return { null_value: 'NULL_VALUE' };
  if (typeof value === 'number') return { number_value: value };
  if (typeof value === 'string') return { string_value: value };
  if (typeof value === 'boolean') return { bool_value: value };
  if (Array.isArray(value)) return { list_value: { values: value.map(jsonToValue) } };
  return { struct_value: jsonToStruct(value) };
}

function memberSet(value: ValueMessage): string | undefined {
  for (const key of ['string_value', 'number_value', 'bool_value', 'struct_value', 'list_value'] as const) {
    if (value[key] !== undefined && value[key] !== null) return key;
  }
  return undefined;
}
