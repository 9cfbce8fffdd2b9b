import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { SourcedObject } from '../../analysis/index.js';
import { UsageError } from '../../controllers/runtime/index.js';

export const STDIN = '-';
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

export interface ReadFilesResult {
  readonly objects: readonly SourcedObject[];
  /** Files that held a document that is not YAML or JSON: reported, and the rest still analysed. */
  readonly unparsable: readonly { readonly file: string; readonly reason: string }[];
}

/**
 * The objects of files and folders (`.yaml`, `.yml`, `.json`; folders' sub-folders only when
 * `recursive`; `-` is standard input), each with the file and the line its document starts on.
 * A `List` stands for its items. A path that does not exist is a usage error.
 */
export async function readAnalysisFiles(inputs: readonly string[], recursive: boolean, readStdin: () => Promise<string>): Promise<ReadFilesResult> {
  const objects: SourcedObject[] = [];
  const unparsable: { file: string; reason: string }[] = [];
  for (const file of await expandInputs(inputs, recursive)) {
    const text = file === STDIN ? await readStdin() : await readFile(file, 'utf8');
    const lines = new LineCounter();
    const documents = parseAllDocuments(text, { lineCounter: lines });
    const errors = documents.flatMap((document) => document.errors);
    if (errors.length > 0) {
      unparsable.push({ file, reason: (errors[0]?.message ?? '').split('\n')[0] ?? '' });
      continue;
    }
    for (const document of documents) {
      const value: unknown = document.toJS();
      if (value === null || typeof value !== 'object') continue;
      const line = lines.linePos(document.contents?.range[0] ?? document.range[0]).line;
      for (const object of itemsOf(value)) objects.push({ object, source: { file, line } });
    }
  }
  return { objects, unparsable };
}

async function expandInputs(inputs: readonly string[], recursive: boolean): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    if (input === STDIN) {
      files.push(input);
      continue;
    }
    const info = await stat(input).catch(() => undefined);
    if (info === undefined) throw new UsageError(`file or directory ${JSON.stringify(input)} does not exist`, { exitCode: 64 });
    if (info.isDirectory()) files.push(...(await walk(input, recursive)));
    else files.push(input);
  }
  return [...new Set(files)];
}

async function walk(directory: string, recursive: boolean): Promise<string[]> {
  const entries = (await readdir(directory, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      if (recursive) files.push(...(await walk(path, recursive)));
    } else if (EXTENSIONS.has(extname(entry.name).toLowerCase())) files.push(path);
  }
  return files;
}

function itemsOf(document: object): unknown[] {
  const { kind, items } = document as { kind?: unknown; items?: unknown };
  if (typeof kind === 'string' && kind.endsWith('List') && Array.isArray(items)) return items as unknown[];
  return [document];
}
