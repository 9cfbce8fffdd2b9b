import { Command, InvalidArgumentError, Option } from 'commander';
import type { BuildInfo, Settings } from '../../runtime/index.js';
import { boolOption, durationFlag, stringArrayFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface AnalyzeFlags {
  allNamespaces: boolean;
  color: boolean;
  failureThreshold: Level;
  listAnalyzers: boolean;
  meshConfigFile?: string;
  output: 'log' | 'json' | 'yaml';
  outputThreshold: Level;
  recursive: boolean;
  suppress?: string[];
  timeout: number;
  useOrch: boolean;
  verbose: boolean;
}

type Level = 'Info' | 'Warning' | 'Error';

const EXAMPLES = `
Examples:
  # Analyze the current live cluster
  meshctl analyze

  # Analyze the current live cluster, simulating the effect of applying additional yaml files
  meshctl analyze a.yaml b.yaml my-app-config/

  # Analyze yaml files without connecting to a live cluster
  meshctl analyze --use-orch=false a.yaml b.yaml my-app-config/

  # Analyze the current live cluster and suppress PodMissingProxy for pod mypod in namespace 'testing'.
  meshctl analyze -S "MSH0103=Pod mypod.testing"

  # Analyze the current live cluster and suppress PodMissingProxy for all pods in namespace 'testing',
  # and suppress MisplacedAnnotation on deployment foobar in namespace default.
  meshctl analyze -S "MSH0103=Pod *.testing" -S "MSH0107=Deployment foobar.default"

  # List available analyzers
  meshctl analyze -L
`;

function levelFlag(value: string): Level {
  const level = (['Info', 'Warning', 'Error'] as const).find((l) => l.toLowerCase() === value.toLowerCase());
  if (level === undefined) throw new InvalidArgumentError(`expected Info, Warning or Error, got "${value}"`);
  return level;
}

/** `meshctl analyze [<file>...]`: finds problems in the cluster's mesh configuration, and in files applied over it. */
export function newMeshctlAnalyzeCommand(
  io: CliIo,
  deps: { settings: Settings<'meshctl'>; buildInfo: () => BuildInfo; readStdin: () => Promise<string>; stdoutIsTty: boolean },
): Command {
  return new Command('analyze')
    .argument('[file...]', 'files and folders to analyse (- for standard input)')
    .description('Analyze mesh configuration and print validation messages')
    .addHelpText('after', EXAMPLES)
    .option('-A, --all-namespaces', 'Analyze all namespaces', false)
    .addOption(boolOption('--color', "Default true.  Disable with '=false' or set $TERM to dumb", true))
    .addOption(
      new Option('--failure-threshold <Level>', 'The severity level of analysis at which to set a non-zero exit code. Valid values: [Info Warning Error]')
        .argParser(levelFlag)
        .default('Error'),
    )
    .option('-L, --list-analyzers', 'List the analyzers available to run. Suppresses normal execution.', false)
    .option('--meshConfigFile <string>', 'Overrides the mesh config values to use for analysis.')
    .addOption(new Option('-o, --output <string>', 'Output format: one of [log json yaml]').choices(['log', 'json', 'yaml']).default('log'))
    .addOption(
      new Option('--output-threshold <Level>', 'The severity level of analysis at which to display messages. Valid values: [Info Warning Error]')
        .argParser(levelFlag)
        .default('Info'),
    )
    .option(
      '-R, --recursive',
      'Process directory arguments recursively. Useful when you want to analyze related manifests organized within the same directory.',
      false,
    )
    .addOption(
      new Option(
        '-S, --suppress <stringArray>',
        "Suppress reporting a message code on a specific resource. Values are supplied in the form <code>=<resource> (e.g. '--suppress \"MSH0102=Namespace frod\"'). Can be repeated. You can include the wildcard character '*' to support a partial match (e.g. '--suppress \"MSH0102=Namespace fr*\"' ).",
      ).argParser(stringArrayFlag),
    )
    .addOption(new Option('--timeout <duration>', 'The duration to wait before failing').argParser(durationFlag).default(30_000, '30s'))
    .addOption(boolOption('-k, --use-orch', 'Use live orchestrator cluster for analysis. Set --use-orch=false to analyze files only.', true))
    .option('-v, --verbose', 'Enable verbose output', false)
    .action(async (files: string[], flags: AnalyzeFlags, command: Command) => {
      const meshctl = await import('../../meshctl/index.js');
      if (flags.listAnalyzers) {
        io.stdout(meshctl.renderAnalyzerList());
        return;
      }
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      const kubeConfig = flags.useOrch ? await meshctl.loadKubeClient(global) : undefined;
      const colorFlagGiven = command.getOptionValueSource('color') === 'cli';
      const [major = '0', minor = '0'] = deps.buildInfo().version.split('.');
      await meshctl.analyze({
        files,
        recursive: flags.recursive,
        readStdin: deps.readStdin,
        ...(kubeConfig ? { cluster: { kubeConfig, meshNamespace: global.meshNamespace } } : {}),
        namespace: kubeConfig ? meshctl.namespaceOf(kubeConfig, global.namespace) : global.namespace || 'default',
        allNamespaces: flags.allNamespaces,
        ...(flags.meshConfigFile !== undefined ? { meshConfigFile: flags.meshConfigFile } : {}),
        output: flags.output,
        outputThreshold: flags.outputThreshold,
        failureThreshold: flags.failureThreshold,
        suppress: flags.suppress ?? [],
        verbose: flags.verbose,
        color: flags.color && deps.settings.get('TERM') !== 'dumb' && (colorFlagGiven || deps.stdoutIsTty),
        timeoutMs: flags.timeout,
        docsVersion: `v${major}.${minor}`,
        io,
      });
    });
}
