import { Command, Option } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { uint16Flag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';
import { DAEMON_POD_SELECTOR } from '../../names/index.js';

interface AdminLogFlags {
  selector: string;
  level?: string;
  stackTraceLevel?: string;
  reset: boolean;
  output: string;
  ctrlz_port: number;
}

/** `meshctl admin` (`meshd`): the daemon's own administration; `admin log` reads and sets its log scopes through ControlZ. */
export function newMeshctlAdminCommand(io: CliIo): Command {
  const admin = new Command('admin')
    .alias('meshd')
    .description('Manage control plane (meshd) configuration')
    .option('-l, --selector <string>', 'label selector', DAEMON_POD_SELECTOR);
  admin.addCommand(
    new Command('log')
      .alias('l')
      .argument('[pod-name]', 'a daemon pod in the mesh namespace (default: the first one --selector picks)')
      .description('Manage meshd logging')
      .addHelpText(
        'after',
        `
Examples:
  # Retrieve information about meshd logging levels.
  meshctl admin log

  # Retrieve information about the logging levels of a specific meshd pod.
  meshctl admin log meshd-b9f7b7cf9-abcde

  # Set the ads scope to debug and the default scope to warn.
  meshctl admin log --level ads:debug,default:warn

  # Reset every scope to info.
  meshctl admin log -r
`,
      )
      .option(
        '--level <string>',
        'Comma-separated list of output logging level for scopes in format <scope>:<level>[,<scope>:<level>,...] Possible values for <level>: none, error, warn, info, debug',
      )
      .option(
        '--stack-trace-level <string>',
        'Comma-separated list of stack trace level for scopes in format <scope>:<stack-trace-level>[,<scope>:<stack-trace-level>,...] Possible values for <stack-trace-level>: none, error, warn, info, debug',
      )
      .option('-r, --reset', 'Reset levels to default value. (info)', false)
      .option('-o, --output <string>', 'Output format: one of json|short', 'short')
      .addOption(new Option('--ctrlz_port <int>', 'ControlZ port').argParser(uint16Flag).default(9876))
      .action(async (pod: string | undefined, _flags: unknown, command: Command) => {
        const flags = command.optsWithGlobals<AdminLogFlags & MeshctlGlobalFlags>();
        if (flags.output !== 'short' && flags.output !== 'json') throw new UsageError(`--output ${flags.output}: want one of json|short`, { exitCode: 64 });
        const meshctl = await import('../../meshctl/index.js');
        // The cluster is reached only once the flags are known to be good.
        let client: Promise<import('../../meshctl/index.js').ScopeClient> | undefined;
        const connect = async (): Promise<import('../../meshctl/index.js').ScopeClient> => {
          const kubeConfig = await meshctl.loadKubeClient(flags);
          let name = pod;
          if (name === undefined) {
            const pods = await meshctl.podsBySelector(kubeConfig, flags.meshNamespace, flags.selector);
            name = pods[0]?.name ?? '';
            if (pods.length > 1) io.stderr(`more than 1 pods fits selector: ${flags.selector}; will use pod: ${name}\n`);
          }
          return meshctl.controlzScopes(kubeConfig, flags.meshNamespace, name, flags.ctrlz_port);
        };
        const scopes = {
          list: async () => (await (client ??= connect())).list(),
          set: async (scope: string, patch: { output_level?: string; stack_trace_level?: string }) => (await (client ??= connect())).set(scope, patch),
        };
        const request = {
          ...(flags.level !== undefined ? { level: flags.level } : {}),
          ...(flags.stackTraceLevel !== undefined ? { stackTraceLevel: flags.stackTraceLevel } : {}),
          reset: flags.reset,
          output: flags.output,
        } as const;
        io.stdout(await meshctl.adminLog(scopes, request));
      }),
  );
  return admin;
}
