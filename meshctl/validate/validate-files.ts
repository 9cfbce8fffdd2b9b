import { readFile, stat } from 'node:fs/promises';
import { parseAllDocuments } from 'yaml';
import type { TypedResource, ValidationIssue, ValidationResult } from '../../crds/index.js';
import { errorCode, MeshError, errorMessage } from '../../runtime/index.js';
import { listItems, walkConfigFiles } from '../config-files.js';
import { checkReferences } from './validate-references.js';

const STDIN = '-';
/** Kinds of other APIs that share a name with one of ours. */
const FOREIGN_KINDS = new Set(['gateway.networking.k8s.io/Gateway']);

/** One finding, ready to print: about a resource (subject and field path) or about a whole file. */
interface Finding {
  severity: 'Error' | 'Warning';
  location: string;
  subject?: string;
  path?: string;
  message: string;
}

/** A validated document: where it came from and how to name it in messages. */
interface Checked {
  file: string;
  subject: string;
  result: ValidationResult;
}

type Crds = typeof import('../../crds/index.js');

/** Where the findings and verdicts go: the standard error and output of the program. */
export interface ValidateOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

interface Run {
  io: ValidateOutput;
  crds: Crds;
  readStdin: () => Promise<string>;
}

/**
 * `meshctl validate`: checks policy files offline, as the admission webhook would check them:
 * every file (directories walked, `-` for standard input), every document, the references between
 * them when `referential`. Prints findings to stderr and verdicts to stdout; throws a MeshError
 * `validation-failed` counting the errors when there are any.
 */
export async function validateFiles(
  inputs: readonly string[],
  referential: boolean,
  options: { io: ValidateOutput; readStdin: () => Promise<string> },
): Promise<void> {
  // Loaded here, not at import time, so that `meshctl --help` does not build every schema.
  const run: Run = { ...options, crds: await import('../../crds/index.js') };
  const findings = new Map<string, Finding[]>();
  const note = (file: string, finding: Finding): void => {
    findings.set(file, [...(findings.get(file) ?? []), finding]);
  };

  const files = await expandInputs(inputs, findings);
  const checked: Checked[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = file === STDIN ? await run.readStdin() : await readFile(file, 'utf8');
    } catch (error) {
      note(file, { severity: 'Error', location: file, message: `cannot read file: ${describeError(error)}` });
      continue;
    }
    for (const document of parseDocuments(text, file, note)) {
      for (const object of listItems(document)) checked.push({ file, subject: subjectOf(object), result: checkDocument(object, run.crds) });
    }
  }

  const referenceWarnings = referential
    ? checkReferences(checked.flatMap((c) => (c.result.resource ? [c.result.resource] : [])))
    : new Map<TypedResource, ValidationIssue[]>();
  for (const { file, subject, result } of checked) {
    const extra = result.resource ? (referenceWarnings.get(result.resource) ?? []) : [];
    for (const issue of result.errors) note(file, { severity: 'Error', location: file, subject, path: issue.path, message: issue.message });
    for (const issue of [...result.warnings, ...extra]) note(file, { severity: 'Warning', location: file, subject, path: issue.path, message: issue.message });
  }

  let errorCount = 0;
  const failedFiles: string[] = [];
  for (const [file, list] of findings) {
    for (const finding of list) run.io.stderr(`${formatFinding(finding)}\n`);
    const errors = list.filter((finding) => finding.severity === 'Error').length;
    errorCount += errors;
    if (errors > 0) failedFiles.push(file);
  }
  for (const file of findings.keys()) {
    if (failedFiles.includes(file)) continue;
    run.io.stdout(file === STDIN ? 'validation succeed\n' : `${JSON.stringify(file)} is valid\n`);
  }
  if (errorCount > 0) {
    throw new MeshError('validation-failed', `validation failed: ${plural(errorCount, 'error')} in ${failedFiles.length} of ${plural(findings.size, 'input')}`);
  }
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function formatFinding(finding: Finding): string {
  const parts = [finding.location, finding.subject, finding.path].filter((part): part is string => part !== undefined && part !== '');
  return `${finding.severity}: ${parts.join(': ')}: ${finding.message}`;
}

function describeError(error: unknown): string {
  const code = errorCode(error);
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory';
  return errorMessage(error);
}

/**
 * Files in the order given; directories walked (sorted) for .yaml, .yml and .json files; each file
 * once. Every input gets its entry in `findings`, in that order, with what was wrong with it.
 */
async function expandInputs(inputs: readonly string[], findings: Map<string, Finding[]>): Promise<string[]> {
  const files: string[] = [];
  const add = (file: string): void => {
    if (files.includes(file)) return;
    files.push(file);
    findings.set(file, []);
  };
  const note = (input: string, finding: Finding): void => {
    findings.set(input, [...(findings.get(input) ?? []), finding]);
  };
  for (const input of inputs) {
    if (input === STDIN) {
      add(input);
      continue;
    }
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(input)).isDirectory();
    } catch (error) {
      note(input, { severity: 'Error', location: input, message: `cannot read file: ${describeError(error)}` });
      continue;
    }
    if (!isDirectory) {
      add(input);
      continue;
    }
    const found = await walkConfigFiles(input, true);
    if (found.length === 0) note(input, { severity: 'Error', location: input, message: 'no .yaml, .yml or .json files in this directory' });
    found.forEach(add);
  }
  return files;
}

/** The documents of a YAML or JSON stream; syntax errors are noted with their line and column. */
function parseDocuments(text: string, file: string, note: (file: string, finding: Finding) => void): unknown[] {
  const documents: unknown[] = [];
  for (const document of parseAllDocuments(text)) {
    if (document.errors.length > 0) {
      for (const error of document.errors) {
        const position = error.linePos?.[0];
        const location = position ? `${file}:${position.line}:${position.col}` : file;
        const message = (error.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        note(file, { severity: 'Error', location, message: `invalid YAML: ${message}` });
      }
      continue;
    }
    try {
      const value: unknown = document.toJS();
      // An empty document (only comments, or a trailing `---`) holds no resource.
      if (value !== null && value !== undefined) documents.push(value);
    } catch (error) {
      note(file, { severity: 'Error', location: file, message: `invalid YAML: ${describeError(error)}` });
    }
  }
  return documents;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `Kind namespace/name`, as the findings name a resource. */
function subjectOf(object: unknown): string {
  if (!isRecord(object)) return '(not an object)';
  const kind = typeof object['kind'] === 'string' && object['kind'] !== '' ? object['kind'] : '(no kind)';
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const name = typeof metadata['name'] === 'string' && metadata['name'] !== '' ? metadata['name'] : '(no name)';
  const namespace = typeof metadata['namespace'] === 'string' && metadata['namespace'] !== '' ? metadata['namespace'] : undefined;
  return namespace === undefined ? `${kind} ${name}` : `${kind} ${namespace}/${name}`;
}

/** Our kinds go through the policy validator; anything else only needs to be an addressable object. */
function checkDocument(object: unknown, crds: Crds): ValidationResult {
  if (!isRecord(object) || isMeshDocument(object, crds)) return crds.validateResource(object);
  const errors: ValidationIssue[] = [];
  const { apiVersion, kind } = object;
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  if (typeof apiVersion !== 'string' || apiVersion === '')
    errors.push({ path: 'apiVersion', message: 'required: expected an apiVersion such as v1 or apps/v1' });
  if (typeof kind !== 'string' || kind === '') errors.push({ path: 'kind', message: 'required: expected a kind such as Service' });
  const named = [metadata['name'], metadata['generateName']].some((value) => typeof value === 'string' && value !== '');
  if (!named) errors.push({ path: 'metadata.name', message: 'required: expected the name of the resource' });
  return { errors, warnings: [] };
}

function isMeshDocument(object: Record<string, unknown>, crds: Crds): boolean {
  const { apiVersion, kind } = object;
  const group = typeof apiVersion === 'string' && apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  if (group === 'mesh.io' || group.endsWith('.mesh.io')) return true;
  return typeof kind === 'string' && (crds.KIND_NAMES as readonly string[]).includes(kind) && !FOREIGN_KINDS.has(`${group}/${kind}`);
}
