import { LineCounter, isMap, isNode, isSeq, parseAllDocuments, parseDocument } from 'yaml';
import type { Document, Node } from 'yaml';
import type { KubeObject } from '../../runtime/index.js';
import type { ConfigFileProblem } from './config-file-problem.js';
import { errorMessage } from '../../runtime/index.js';

const CONFIG_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

/** One object read from a file, with where its document (or List item) starts. */
export interface ParsedDocument {
  object: KubeObject;
  line: number;
  column: number;
}

export interface ParsedConfigFile {
  /**
   * False when the file as a whole could not be parsed (a syntax error anywhere in it): which
   * objects it means is unknown, so the caller keeps serving the file's last good objects.
   */
  parsed: boolean;
  /** The good documents, in file order (List items expanded in place). */
  documents: ParsedDocument[];
  problems: ConfigFileProblem[];
}

export function isConfigFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return CONFIG_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/**
 * Parses one config file: multi-document YAML (`.yaml`, `.yml`) or one JSON value (`.json`),
 * where a document may also be a `List` (or `<Kind>List`) whose `items` are the objects. Pure:
 * no file system access; `path` only labels the problems.
 */
export function parseConfigFile(path: string, text: string): ParsedConfigFile {
  return path.toLowerCase().endsWith('.json') ? parseJsonFile(path, text) : parseYamlFile(path, text);
}

function parseYamlFile(path: string, text: string): ParsedConfigFile {
  const lineCounter = new LineCounter();
  const documents = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const at = positionIn(lineCounter);
  const syntaxProblems: ConfigFileProblem[] = [];
  if ('empty' in documents) {
    for (const error of documents.errors) syntaxProblems.push({ path, ...at(error.pos[0]), reason: 'syntax', message: error.message });
    return { parsed: syntaxProblems.length === 0, documents: [], problems: syntaxProblems };
  }
  const values: { value: unknown; node: Node | null; offset: number }[] = [];
  for (const document of documents) {
    const offset = document.contents?.range[0] ?? document.range[0];
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        syntaxProblems.push({ path, ...at(error.pos[0]), reason: 'syntax', message: error.message });
      }
      continue;
    }
    const value = toJs(document);
    if (value instanceof Error) {
      syntaxProblems.push({ path, ...at(offset), reason: 'syntax', message: value.message });
      continue;
    }
    values.push({ value, node: document.contents, offset });
  }
  if (syntaxProblems.length > 0) return { parsed: false, documents: [], problems: syntaxProblems };
  return collectDocuments(path, values, at);
}

/** JSON goes through `JSON.parse` (strict JSON); the YAML parser only locates errors and List items. */
function parseJsonFile(path: string, text: string): ParsedConfigFile {
  const lineCounter = new LineCounter();
  const located = parseDocument(text, { lineCounter, prettyErrors: false });
  const at = positionIn(lineCounter);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const where = located.errors[0] ? at(located.errors[0].pos[0]) : { line: 1, column: 1 };
    const message = `invalid JSON: ${errorMessage(error).split('\n')[0] ?? ''}`;
    return { parsed: false, documents: [], problems: [{ path, ...where, reason: 'syntax', message }] };
  }
  const node = located.errors.length === 0 ? located.contents : null;
  return collectDocuments(path, [{ value, node, offset: node?.range[0] ?? 0 }], at);
}

type Locate = (offset: number) => { line: number; column: number };

function positionIn(lineCounter: LineCounter): Locate {
  return (offset) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
}

function toJs(document: Document.Parsed): unknown {
  try {
    return document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function collectDocuments(path: string, values: readonly { value: unknown; node: Node | null; offset: number }[], at: Locate): ParsedConfigFile {
  const documents: ParsedDocument[] = [];
  const problems: ConfigFileProblem[] = [];
  const accept = (value: unknown, offset: number, fill?: { apiVersion?: string; kind?: string }): void => {
    const where = at(offset);
    const checked = checkObject(value, fill);
    if (typeof checked === 'string') problems.push({ path, ...where, reason: 'document', message: checked });
    else documents.push({ object: checked, ...where });
  };
  for (const { value, node, offset } of values) {
    // An empty document (only comments, or a trailing `---`) holds nothing.
    if (value === null || value === undefined) continue;
    if (isListObject(value)) {
      const itemNodes = isMap(node) ? node.get('items', true) : undefined;
      const fill = listItemTypeMeta(value);
      value.items.forEach((item, index) => {
        const itemNode = isSeq(itemNodes) ? itemNodes.items[index] : undefined;
        accept(item, isNode(itemNode) && itemNode.range ? itemNode.range[0] : offset, fill);
      });
      continue;
    }
    accept(value, offset);
  }
  return { parsed: true, documents, problems };
}

interface ListObject {
  apiVersion?: unknown;
  kind: string;
  items: unknown[];
}

function isListObject(value: unknown): value is ListObject {
  if (!isPlainObject(value)) return false;
  return typeof value['kind'] === 'string' && value['kind'].endsWith('List') && Array.isArray(value['items']);
}

/** Items of a typed list (`PodList`) may omit apiVersion and kind; a plain `List` names them per item. */
function listItemTypeMeta(list: ListObject): { apiVersion?: string; kind?: string } | undefined {
  if (list.kind === 'List') return undefined;
  const kind = list.kind.slice(0, -'List'.length);
  return typeof list.apiVersion === 'string' ? { apiVersion: list.apiVersion, kind } : { kind };
}

/** The shape every served object needs; the returned string says what is missing. */
function checkObject(value: unknown, fill?: { apiVersion?: string; kind?: string }): KubeObject | string {
  if (!isPlainObject(value)) {
    return `expected an object with apiVersion, kind and metadata, got ${Array.isArray(value) ? 'a list' : typeof value}`;
  }
  const object: Record<string, unknown> = { ...value };
  if (object['apiVersion'] === undefined && fill?.apiVersion !== undefined) object['apiVersion'] = fill.apiVersion;
  if (object['kind'] === undefined && fill?.kind !== undefined) object['kind'] = fill.kind;
  const { apiVersion, kind, metadata } = object;
  if (typeof apiVersion !== 'string' || apiVersion === '') return 'missing apiVersion';
  if (typeof kind !== 'string' || kind === '') return 'missing kind';
  if (!isPlainObject(metadata)) return `${kind}: missing metadata`;
  if (typeof metadata['name'] !== 'string' || metadata['name'] === '') return `${kind}: missing metadata.name`;
  const namespace = metadata['namespace'];
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') {
    return `${kind} ${metadata['name']}: metadata.namespace must be a string`;
  }
  return object as KubeObject;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
