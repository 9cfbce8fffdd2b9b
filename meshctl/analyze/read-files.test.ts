import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readAnalysisFiles } from './read-files.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'analyze-files-'));
  writeFileSync(join(dir, 'a.yaml'), '# leading comment\nkind: Namespace\nmetadata: { name: a }\n---\n\n---\nkind: Namespace\nmetadata: { name: b }\n');
  writeFileSync(join(dir, 'notes.txt'), 'kind: Namespace\n');
  mkdirSync(join(dir, 'nested'));
  writeFileSync(join(dir, 'nested', 'c.json'), '{"kind": "List", "items": [{"kind": "Namespace", "metadata": {"name": "c"}}]}');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const names = (result: Awaited<ReturnType<typeof readAnalysisFiles>>): string[] =>
  result.objects.map((o) => `${(o.object as { metadata: { name: string } }).metadata.name}@${o.source?.file ?? ''}:${o.source?.line ?? 0}`);

describe('readAnalysisFiles', () => {
  test('a folder: YAML and JSON files only, each document with the line it starts on; sub-folders only with -R', async () => {
    expect(names(await readAnalysisFiles([dir], false, async () => ''))).toEqual([`a@${join(dir, 'a.yaml')}:2`, `b@${join(dir, 'a.yaml')}:7`]);
    expect(names(await readAnalysisFiles([dir], true, async () => ''))).toEqual([
      `a@${join(dir, 'a.yaml')}:2`,
      `b@${join(dir, 'a.yaml')}:7`,
      `c@${join(dir, 'nested', 'c.json')}:1`,
    ]);
  });

  test('standard input (-) is read once, as a file named -', async () => {
    const result = await readAnalysisFiles(['-'], false, async () => 'kind: Namespace\nmetadata: { name: piped }\n');
    expect(names(result)).toEqual(['piped@-:1']);
  });

  test('a file that does not parse is reported and skipped; a missing path is a usage error naming it', async () => {
    writeFileSync(join(dir, 'broken.yml'), 'kind: [\n');
    const result = await readAnalysisFiles([join(dir, 'broken.yml'), join(dir, 'a.yaml')], false, async () => '');
    expect(result.unparsable.map((u) => u.file)).toEqual([join(dir, 'broken.yml')]);
    expect(result.objects).toHaveLength(2);
    await expect(readAnalysisFiles([join(dir, 'missing.yaml')], false, async () => '')).rejects.toThrow(
      `file or directory "${join(dir, 'missing.yaml')}" does not exist`,
    );
  });
});
