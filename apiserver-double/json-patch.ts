import { MeshError } from '../runtime/index.js';
import { clone, deepEqual, isPlainObject } from './object-util.js';

export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  from?: string;
  value?: unknown;
}

/** A patch that cannot be applied to the document (a missing path, a failed test). */
export class JsonPatchError extends MeshError<'json-patch'> {
  constructor(message: string) {
    super('json-patch', message);
  }
}

/** Applies an RFC 6902 JSON patch; returns a new document and leaves `document` untouched. */
export function applyJsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new JsonPatchError('a JSON patch must be an array of operations');
  let doc = clone(document);
  for (const raw of operations) {
    if (!isPlainObject(raw) || typeof raw['op'] !== 'string' || typeof raw['path'] !== 'string') {
      throw new JsonPatchError(`invalid JSON patch operation: ${JSON.stringify(raw)}`);
    }
    const op = raw as unknown as JsonPatchOperation;
    switch (op.op) {
      case 'add':
        doc = add(doc, op.path, clone(requireValue(op)));
        break;
      case 'remove':
        doc = remove(doc, op.path).doc;
        break;
      case 'replace':
        get(doc, op.path);
        doc = op.path === '' ? clone(requireValue(op)) : add(remove(doc, op.path).doc, op.path, clone(requireValue(op)));
        break;
      case 'move': {
        const from = requireFrom(op);
        const removed = remove(doc, from);
        doc = add(removed.doc, op.path, removed.value);
        break;
      }
      case 'copy':
        doc = add(doc, op.path, clone(get(doc, requireFrom(op))));
        break;
      case 'test':
        if (!deepEqual(get(doc, op.path), requireValue(op))) {
          throw new JsonPatchError(`testing value ${op.path} failed: test failed`);
        }
        break;
      default:
        throw new JsonPatchError(`Unexpected kind: ${String((op as { op: unknown }).op)}`);
    }
  }
  return doc;
}

function requireValue(op: JsonPatchOperation): unknown {
  if (!('value' in op)) throw new JsonPatchError(`${op.op} operation does not apply: missing value`);
  return op.value;
}

function requireFrom(op: JsonPatchOperation): string {
  if (typeof op.from !== 'string') throw new JsonPatchError(`${op.op} operation does not apply: missing from`);
  return op.from;
}

function parsePointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new JsonPatchError(`invalid JSON pointer "${pointer}"`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function get(doc: unknown, pointer: string): unknown {
  let node = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(node)) {
      const index = arrayIndex(token, node.length - 1, pointer);
      node = node[index];
    } else if (isPlainObject(node) && Object.hasOwn(node, token)) {
      node = node[token];
    } else {
      throw new JsonPatchError(`path "${pointer}" does not exist`);
    }
  }
  return node;
}

function parentOf(doc: unknown, pointer: string): { parent: unknown; token: string } {
  const tokens = parsePointer(pointer);
  const token = tokens.pop();
  if (token === undefined) throw new JsonPatchError('the root cannot be the target here');
  const parentPointer = tokens.map((t) => '/' + t.replace(/~/g, '~0').replace(/\//g, '~1')).join('');
  return { parent: get(doc, parentPointer), token };
}

function add(doc: unknown, pointer: string, value: unknown): unknown {
  if (pointer === '') return value;
  const { parent, token } = parentOf(doc, pointer);
  if (Array.isArray(parent)) {
    const index = token === '-' ? parent.length : arrayIndex(token, parent.length, pointer);
    parent.splice(index, 0, value);
  } else if (isPlainObject(parent)) {
    parent[token] = value;
  } else {
    throw new JsonPatchError(`path "${pointer}" does not exist`);
  }
  return doc;
}

function remove(doc: unknown, pointer: string): { doc: unknown; value: unknown } {
  const { parent, token } = parentOf(doc, pointer);
  if (Array.isArray(parent)) {
    const index = arrayIndex(token, parent.length - 1, pointer);
    const [value] = parent.splice(index, 1);
    return { doc, value };
  }
  if (isPlainObject(parent) && Object.hasOwn(parent, token)) {
    const value = parent[token];
    delete parent[token];
    return { doc, value };
  }
  throw new JsonPatchError(`unable to remove nonexistent key: ${token}: missing value`);
}

function arrayIndex(token: string, max: number, pointer: string): number {
  if (!/^(0|[1-9]\d*)$/.test(token)) throw new JsonPatchError(`invalid array index in "${pointer}"`);
  const index = Number(token);
  if (index > max) throw new JsonPatchError(`index ${index} out of range in "${pointer}"`);
  return index;
}
