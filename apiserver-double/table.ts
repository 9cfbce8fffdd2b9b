import type { KubeObject } from '../runtime/index.js';
import { isPlainObject } from './object-util.js';
import type { PrinterColumn, ResourceType } from './resource-type.js';
import { age } from './table-age.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

const NAME_COLUMN = { name: 'Name', type: 'string', format: 'name', description: 'Name must be unique within a namespace.', priority: 0 };
const AGE_COLUMN = {
  name: 'Age',
  type: 'string',
  format: '',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

/** The `meta.k8s.io/v1 Table` that `kubectl get` asks for, with server-side columns. */
export function toTable(
  type: ResourceType,
  objects: KubeObject[],
  meta: { resourceVersion?: string; continue?: string; remainingItemCount?: number },
  includeObject: IncludeObject,
  nowMs: number,
): Record<string, unknown> {
  const columns = type.printerColumns;
  const addAge = (!type.custom || columns.length === 0) && !columns.some((c) => c.jsonPath === '.metadata.creationTimestamp');
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: meta,
    columnDefinitions: [
      NAME_COLUMN,
      ...columns.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description ?? '', priority: c.priority ?? 0 })),
      ...(addAge ? [AGE_COLUMN] : []),
    ],
    rows: objects.map((object) => ({
      cells: [
        object.metadata?.name ?? '',
        ...columns.map((c) => cell(c, object as Record<string, unknown>, nowMs)),
        ...(addAge ? [age(object.metadata?.creationTimestamp, nowMs)] : []),
      ],
      ...(includeObject === 'None' ? {} : { object: includeObject === 'Object' ? object : partialMetadata(object) }),
    })),
  };
}

export function partialMetadata(object: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: object.metadata ?? {} };
}

function cell(column: PrinterColumn, object: Record<string, unknown>, nowMs: number): unknown {
  const value = column.compute ? column.compute(object, nowMs) : evaluateJsonPath(object, column.jsonPath);
  if (value === undefined || value === null) return null;
  if (column.type === 'date') return age(value, nowMs);
  if (column.type === 'integer' || column.type === 'number') return typeof value === 'number' ? value : Number(value);
  if (column.type === 'boolean') return Boolean(value);
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Evaluates `.a.b[0].c` and `[?(@.type=="Ready")]` filters, the JSONPath subset printer columns use. */
export function evaluateJsonPath(object: unknown, path: string): unknown {
  const expr = path
    .trim()
    .replace(/^\{|\}$/g, '')
    .replace(/^\$/, '');
  const tokens = expr.match(/\.[^.[\]]+|\[\?\(@\.[^)]*\)\]|\[\d+\]/g) ?? [];
  let nodes: unknown[] = [object];
  for (const token of tokens) {
    const next: unknown[] = [];
    for (const node of nodes) {
      if (token.startsWith('.')) {
        if (isPlainObject(node) && token.slice(1) in node) next.push(node[token.slice(1)]);
      } else if (token.startsWith('[?')) {
        const m = /^\[\?\(@\.([^=!]+?)\s*(==|!=)\s*["']?([^"')]*)["']?\)\]$/.exec(token);
        if (m && Array.isArray(node)) {
          for (const element of node) {
            const v = isPlainObject(element) ? element[m[1] as string] : undefined;
            const equal = String(v) === m[3];
            if (m[2] === '==' ? equal : !equal) next.push(element);
          }
        }
      } else if (Array.isArray(node)) {
        const element = node[Number(token.slice(1, -1))];
        if (element !== undefined) next.push(element);
      }
    }
    nodes = next;
  }
  return nodes.length === 0 ? undefined : nodes.length === 1 ? nodes[0] : nodes;
}
