import { describe, expect, test } from '@jest/globals';
import { isConfigFileName, parseConfigFile } from './config-file-parser.js';

const NS = (name: string): string => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`;

describe('parseConfigFile', () => {
  test('multi-document YAML keeps file order and skips empty documents', () => {
    const text = `# leading comment\n${NS('a')}---\n---\n# only a comment\n---\n${NS('b')}`;
    const parsed = parseConfigFile('/c/ns.yaml', text);
    expect(parsed.parsed).toBe(true);
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents.map((d) => [d.object.metadata?.name, d.line, d.column])).toEqual([
      ['a', 2, 1],
      ['b', 10, 1],
    ]);
  });

  test('an empty file holds nothing and is not a problem', () => {
    expect(parseConfigFile('/c/empty.yaml', '')).toEqual({ parsed: true, documents: [], problems: [] });
    expect(parseConfigFile('/c/comments.yml', '# nothing here\n')).toEqual({ parsed: true, documents: [], problems: [] });
  });

  test('a syntax error anywhere marks the whole file unparsed, with line and column', () => {
    const text = `${NS('a')}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: [unclosed\n`;
    const parsed = parseConfigFile('/c/bad.yaml', text);
    expect(parsed.parsed).toBe(false);
    expect(parsed.documents).toEqual([]);
    expect(parsed.problems.length).toBeGreaterThan(0);
    const [first] = parsed.problems;
    expect(first).toMatchObject({ path: '/c/bad.yaml', reason: 'syntax' });
    expect(first?.line).toBeGreaterThanOrEqual(9);
  });

  test.each([
    ['a duplicate key', 'apiVersion: v1\nkind: Namespace\nkind: Namespace\nmetadata: {name: a}\n', 3, 1],
    ['a bad indentation', 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n bad: x\n', 5, 1],
  ])('%s is a syntax problem at its position', (_name, text, line, column) => {
    const parsed = parseConfigFile('/c/x.yaml', text);
    expect(parsed.parsed).toBe(false);
    expect(parsed.problems[0]).toMatchObject({ line, column, reason: 'syntax' });
  });

  test.each([
    ['a scalar', 'just a string\n', 'expected an object with apiVersion, kind and metadata, got string'],
    ['a list', '- a\n- b\n', 'expected an object with apiVersion, kind and metadata, got a list'],
    ['no apiVersion', 'kind: Namespace\nmetadata: {name: a}\n', 'missing apiVersion'],
    ['no kind', 'apiVersion: v1\nmetadata: {name: a}\n', 'missing kind'],
    ['no metadata', 'apiVersion: v1\nkind: Namespace\n', 'Namespace: missing metadata'],
    ['no name', 'apiVersion: v1\nkind: Namespace\nmetadata: {labels: {a: b}}\n', 'Namespace: missing metadata.name'],
    ['a numeric namespace', 'apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: 3}\n', 'Pod a: metadata.namespace must be a string'],
  ])('a document with %s is dropped alone', (_name, bad, message) => {
    const text = `${NS('first')}---\n${bad}---\n${NS('last')}`;
    const parsed = parseConfigFile('/c/mixed.yaml', text);
    expect(parsed.parsed).toBe(true);
    expect(parsed.documents.map((d) => d.object.metadata?.name)).toEqual(['first', 'last']);
    expect(parsed.problems).toEqual([{ path: '/c/mixed.yaml', line: 6, column: 1, reason: 'document', message }]);
  });

  test('a List expands to its items, each located', () => {
    const text = `apiVersion: v1\nkind: List\nitems:\n  - ${NS('a').replace(/\n(?=.)/g, '\n    ')}  - apiVersion: v1\n    kind: Namespace\n    metadata: {}\n`;
    const parsed = parseConfigFile('/c/list.yaml', text);
    expect(parsed.documents.map((d) => [d.object.metadata?.name, d.line, d.column])).toEqual([['a', 4, 5]]);
    expect(parsed.problems).toEqual([{ path: '/c/list.yaml', line: 8, column: 5, reason: 'document', message: 'Namespace: missing metadata.name' }]);
  });

  test('items of a typed list inherit apiVersion and kind', () => {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', items: [{ metadata: { name: 'm', namespace: 'x' }, data: { a: '1' } }] });
    const parsed = parseConfigFile('/c/maps.json', text);
    expect(parsed.documents.map((d) => d.object)).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', namespace: 'x' }, data: { a: '1' } }]);
  });

  test('a JSON file holds one object or a List, with item positions', () => {
    const one = parseConfigFile('/c/one.json', '{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}');
    expect(one.documents.map((d) => d.object.metadata?.name)).toEqual(['a']);
    const list = parseConfigFile(
      '/c/list.json',
      '{\n  "kind": "List",\n  "apiVersion": "v1",\n  "items": [\n    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}},\n    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}\n  ]\n}\n',
    );
    expect(list.documents.map((d) => [d.object.metadata?.name, d.line, d.column])).toEqual([
      ['a', 5, 5],
      ['b', 6, 5],
    ]);
  });

  test('JSON is parsed strictly and errors are located', () => {
    const trailingComma = parseConfigFile('/c/t.json', '{"apiVersion": "v1",}');
    expect(trailingComma.parsed).toBe(false);
    expect(trailingComma.problems[0]).toMatchObject({ reason: 'syntax', line: 1, column: 1 });
    expect(trailingComma.problems[0]?.message).toMatch(/^invalid JSON: /);
    const unclosed = parseConfigFile('/c/u.json', '{\n  "apiVersion": "v1",\n  "items": [\n');
    expect(unclosed.parsed).toBe(false);
    expect(unclosed.problems[0]?.line).toBeGreaterThanOrEqual(3);
  });

  test.each([
    ['a.yaml', true],
    ['a.YML', true],
    ['a.json', true],
    ['a.yaml~', false],
    ['a.txt', false],
    ['yaml', false],
  ])('isConfigFileName(%s) is %s', (name, expected) => {
    expect(isConfigFileName(name)).toBe(expected);
  });
});
