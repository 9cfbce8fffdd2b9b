import { readFile, stat } from 'node:fs/promises';
import { LineCounter, parseAllDocuments } from 'yaml';
import type { SourcedObject } from '../../analysis/index.js';
import { UsageError } from '../../runtime/index.js';
import { listItems, walkConfigFiles } from '../config-files.js';

export const STDIN = '-';

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
      for (const object of listItems(value)) objects.push({ object, source: { file, line } });
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
    if (info.isDirectory()) files.push(...(await walkConfigFiles(input, recursive)));
    else files.push(input);
  }
  return [...new Set(files)];
}
