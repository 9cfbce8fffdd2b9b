import { readFileSync, writeFileSync } from 'node:fs';
import { UsageError, errorMessage } from '../../controllers/runtime/index.js';
import { compileInjector, injectResources, kubeInjectTemplate, uninjectPod } from '../../webhook/inject/index.js';
import { resolveInjectSources, type InjectSourceContext, type InjectSourceFlags } from './inject-sources.js';

export interface ResourceIo {
  /** `-f/--filename`: a file, or `-` for standard input. */
  readonly filename: string;
  /** `-o/--output`: a file; '' writes to standard output. */
  readonly output: string;
  readonly readStdin: () => Promise<string>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** `meshctl orch-inject`: the workloads of the input with their sidecars, other kinds unchanged, in order. */
export async function orchInject(io: ResourceIo, flags: InjectSourceFlags, context: Omit<InjectSourceContext, 'warn'>): Promise<void> {
  const input = await readInput(io);
  const sources = await resolveInjectSources(flags, { ...context, warn: io.stderr });
  const injector = compileInjector(sources.config);
  const revision = flags.revision === '' ? 'default' : flags.revision;
  const result = injectResources(input, kubeInjectTemplate(injector, { meshConfig: sources.meshConfig, revision }));
  for (const warning of result.warnings) io.stderr(warning);
  writeOutput(io, result.text);
}

/** `meshctl x orch-uninject`: the reverse of `orch-inject`, exactly. */
export async function orchUninject(io: ResourceIo): Promise<void> {
  const input = await readInput(io);
  const result = injectResources(input, (template) => ({ injected: uninjectPod(template) }));
  writeOutput(io, result.text);
}

async function readInput(io: ResourceIo): Promise<string> {
  if (io.filename === '') throw new UsageError('filename not specified (see --filename or -f)');
  if (io.filename === '-') return io.readStdin();
  try {
    return readFileSync(io.filename, 'utf8');
  } catch (error) {
    throw new UsageError(`--filename: cannot read ${io.filename}: ${errorMessage(error)}`, { cause: error });
  }
}

function writeOutput(io: ResourceIo, text: string): void {
  if (io.output === '') io.stdout(text);
  else writeFileSync(io.output, text);
}
