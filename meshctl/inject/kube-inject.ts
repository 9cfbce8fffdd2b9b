import { readFileSync, writeFileSync } from 'node:fs';
import { UsageError, errorMessage } from '../../runtime/index.js';
import { compileInjector, injectResources, kubeInjectTemplate, uninjectPod, type Pod } from '../../webhook/inject/index.js';
import { findLiveInjector, injectThroughWebhook, type LiveInjector } from './live-injector.js';
import { resolveInjectSources, type InjectSourceContext, type InjectSourceFlags } from './inject-sources.js';
import { revisionLabelValue } from '../../names/index.js';

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
export async function kubeInject(
  io: ResourceIo,
  flags: InjectSourceFlags & { readonly webhookConfig: string },
  context: Omit<InjectSourceContext, 'warn'>,
): Promise<void> {
  const input = await readInput(io);
  // Without templates given, the cluster's own injector answers, as the reference does; the
  // ConfigMaps (or the built-in defaults) serve when it cannot be reached.
  if (flags.injectConfigFile === '' && context.kubeConfig) {
    const live = await findLiveInjector(context.kubeConfig, flags.revision === 'default' ? '' : flags.revision);
    if (!('reason' in live)) return writeOutput(io, await injectWithWebhook(input, live));
    // The reference's words: the configuration is looked up by revision label; --webhookConfig names it in the warning.
    io.stderr(
      `failed to get injection config from mutatingWebhookConfigurations "${flags.webhookConfig}", will fall back to get injection from the injection configmap "${flags.injectConfigMapName}" : ${live.reason}\n`,
    );
  }
  const sources = await resolveInjectSources(flags, { ...context, warn: io.stderr });
  const injector = compileInjector(sources.config);
  const revision = revisionLabelValue(flags.revision);
  const result = injectResources(input, kubeInjectTemplate(injector, { meshConfig: sources.meshConfig, revision }));
  for (const warning of result.warnings) io.stderr(warning);
  writeOutput(io, result.text);
}

/** `meshctl x orch-uninject`: the reverse of `orch-inject`, exactly. */
export async function kubeUninject(io: ResourceIo): Promise<void> {
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

/** Two walks of the same documents: the first collects the pod templates, the second puts the webhook's answers in. */
async function injectWithWebhook(input: string, live: LiveInjector): Promise<string> {
  const templates: { pod: Pod; namespace: string }[] = [];
  injectResources(input, (template, owner) => {
    templates.push({ pod: template, namespace: owner.namespace === '' ? 'default' : owner.namespace });
    return { injected: template };
  });
  const injected: Pod[] = [];
  for (const { pod, namespace } of templates) injected.push(await injectThroughWebhook(live, pod, namespace));
  let next = 0;
  return injectResources(input, () => ({ injected: injected[next++] ?? {} })).text;
}
