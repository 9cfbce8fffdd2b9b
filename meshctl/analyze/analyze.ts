import type { KubeConfig } from '@kubernetes/client-node';
import { ALL_ANALYZERS, ALL_INPUTS, atLeast, buildSnapshot, runAnalyzers, type Analyzer, type MessageLevel, type SourcedObject } from '../../analysis/index.js';
import { buildMeshConfig, readMeshConfigFile } from '../../crds/index.js';
import { ExitStatus, MeshError, UsageError } from '../../runtime/index.js';
import { PROXY_CONTAINER } from '../../names/index.js';
import { readClusterState, type ClusterState } from './read-cluster.js';
import { readAnalysisFiles } from './read-files.js';
import { renderMessages, type AnalyzeFormat } from './render-messages.js';
import { isSuppressed, parseSuppressions } from './suppressions.js';

/** The reference's exit code when the analyzers found issues at or above the failure threshold. */
export const ANALYZERS_FOUND_ISSUES = 79;

export interface AnalyzeOptions {
  readonly files: readonly string[];
  readonly recursive: boolean;
  readonly readStdin: () => Promise<string>;
  /** The live cluster, unless `--use-orch=false`. */
  readonly cluster?: { readonly kubeConfig: KubeConfig; readonly meshNamespace: string };
  readonly namespace: string;
  readonly allNamespaces: boolean;
  readonly meshConfigFile?: string;
  readonly output: AnalyzeFormat;
  readonly outputThreshold: MessageLevel;
  readonly failureThreshold: MessageLevel;
  readonly suppress: readonly string[];
  readonly verbose: boolean;
  readonly color: boolean;
  readonly timeoutMs: number;
  readonly docsVersion: string;
  readonly io: { stdout(text: string): void; stderr(text: string): void };
  readonly analyzers?: readonly Analyzer[];
}

/**
 * `meshctl analyze`: the cluster's state (unless `-k=false`) with the files applied over it,
 * analysed; messages about other namespaces dropped unless `-A`; `-S` suppressions and the
 * output threshold applied; exit status 79 when a message reaches the failure threshold.
 */
export async function analyze(options: AnalyzeOptions): Promise<void> {
  const { io } = options;
  const suppressions = parseSuppressions(options.suppress, (line) => io.stderr(`${line}\n`));
  const target = options.allNamespaces ? 'all namespaces' : options.cluster ? `namespace: ${options.namespace}` : options.files.join(' ');
  const { state, files } = await withTimeout(options.timeoutMs, async () => ({
    state: options.cluster ? await readClusterState(options.cluster.kubeConfig, options.cluster.meshNamespace) : undefined,
    files: await readAnalysisFiles(options.files, options.recursive, options.readStdin),
  }));
  for (const { file, reason } of files.unparsable) io.stderr(`Error(s) adding files: ${file}: ${reason}\n`);
  const meshConfig = meshConfigOf(options.meshConfigFile, state);
  const snapshot = buildSnapshot({
    objects: [...(state?.objects ?? defaultIngressGateway(meshConfig)), ...files.objects.map((o) => inNamespace(o, options.namespace))],
    meshConfig,
    // Offline, the files are the whole world, as the reference reads them: a kind no file holds is
    // an empty set (a reference to a Gateway no file holds is a finding), and no analyzer is skipped.
    complete: state?.complete ?? ALL_INPUTS,
  });
  const result = runAnalyzers(snapshot, options.analyzers ?? ALL_ANALYZERS);
  if (options.verbose) {
    io.stderr(`Analyzed resources in ${target}\n`);
    io.stderr(`Executed analyzers:\n${result.executed.map((n) => `    ${n}\n`).join('')}`);
    io.stderr(`Skipped analyzers:\n${result.skipped.map((n) => `    ${n}\n`).join('')}`);
  }
  const inScope = result.messages.filter(
    (m) => options.allNamespaces || !options.cluster || m.resource === undefined || m.resource.namespace === '' || m.resource.namespace === options.namespace,
  );
  const kept = inScope.filter((m) => !isSuppressed(m, suppressions));
  const shown = kept.filter((m) => atLeast(m.level, options.outputThreshold));
  if (shown.length > 0 || options.output !== 'log')
    io.stdout(renderMessages(shown, options.output, { color: options.color, docsVersion: options.docsVersion }));
  if (shown.length === 0) {
    const unparsed = files.unparsable.length;
    io.stderr(
      `\u2714 No validation issues found when analyzing ${target}${unparsed > 0 ? ` (but ${unparsed} ${unparsed === 1 ? 'file' : 'files'} could not be parsed)` : ''}.\n`,
    );
  }
  if (kept.some((m) => atLeast(m.level, options.failureThreshold))) {
    if (options.output === 'log') {
      io.stderr(`Error: Analyzers found issues when analyzing ${target}.\n`);
      io.stderr(`See https://mesh.io/${options.docsVersion}/docs/reference/config/analysis for more information about causes and resolutions.\n`);
    }
    throw new ExitStatus(ANALYZERS_FOUND_ISSUES);
  }
}

/** `-L`: `* <name>:` then the description indented, sorted by name. */
export function renderAnalyzerList(analyzers: readonly Analyzer[] = ALL_ANALYZERS): string {
  return [...analyzers]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((a) => `* ${a.name}:\n    ${a.description}\n`)
    .join('');
}

/**
 * Offline, the ingress gateway users do not include in their files, as the reference adds it
 * (unless the mesh config turns the ingress controller off): the mesh config's `ingressService`
 * and a stand-in pod in the root namespace, so that Gateways selecting it are not findings.
 */
function defaultIngressGateway(meshConfig: ReturnType<typeof buildMeshConfig>): SourcedObject[] {
  if (meshConfig.ingressControllerMode === 'OFF') return [];
  const namespace = meshConfig.rootNamespace;
  const name = meshConfig.ingressService;
  const selector = { mesh: 'ingressgateway' };
  const port = (portName: string, number: number) => ({ name: portName, port: number, protocol: 'TCP', targetPort: number });
  return [
    {
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${name}-dummypod`, namespace, labels: selector },
        spec: { containers: [{ name: PROXY_CONTAINER }] },
      },
    },
    {
      object: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace },
        spec: { selector, ports: [port('http2', 80), port('https', 443), port('tcp', 31400), port('tls', 15443)] },
      },
    },
  ];
}

/** A file's object without a namespace lands in the namespace analysed, as `kubectl apply` would put it. */
function inNamespace(sourced: SourcedObject, namespace: string): SourcedObject {
  const object = sourced.object as { kind?: unknown; metadata?: { namespace?: unknown } } | null;
  if (object === null || typeof object !== 'object' || object.kind === 'Namespace' || object.kind === 'MutatingWebhookConfiguration') return sourced;
  if (typeof object.metadata?.namespace === 'string' && object.metadata.namespace !== '') return sourced;
  return { ...sourced, object: { ...object, metadata: { ...object.metadata, namespace } } };
}

function meshConfigOf(file: string | undefined, state: ClusterState | undefined): ReturnType<typeof buildMeshConfig> {
  if (file !== undefined) {
    const text = readMeshConfigFile(file);
    if (text === undefined) throw new UsageError(`--meshConfigFile ${file}: no such file`, { exitCode: 64 });
    return buildMeshConfig(text, file);
  }
  return buildMeshConfig(state?.meshConfigText, 'the mesh ConfigMap');
}

async function withTimeout<T>(timeoutMs: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new MeshError('analysis-timeout', `analysis timed out after ${timeoutMs / 1000}s (--timeout)`)), timeoutMs);
  });
  try {
    return await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
