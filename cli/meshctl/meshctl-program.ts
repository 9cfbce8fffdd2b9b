import { Command, Option } from 'commander';
import { loadProcessSettings, readBuildInfo, type Settings } from '../../runtime/index.js';
import { intFlag } from '../flags.js';
import { newMeshctlAdminCommand } from './meshctl-admin.js';
import { newMeshctlAnalyzeCommand } from './meshctl-analyze.js';
import { newMeshctlDashboardCommand } from './meshctl-dashboard.js';
import { meshctlFlagDefaults, readMeshctlDefaults } from './meshctl-defaults.js';
import { newMeshctlExperimentalCommand } from './meshctl-experimental.js';
import { newMeshctlKubeInjectCommand } from './meshctl-inject.js';
import { newMeshctlOperatorCommand } from './meshctl-operator.js';
import { newMeshctlConfigCommand, newMeshctlOptionsCommand } from './meshctl-options.js';
import { newMeshctlProxyConfigCommand } from './meshctl-proxy-config.js';
import { newMeshctlProxyStatusCommand } from './meshctl-proxy-status.js';
import { newMeshctlManifestCommand, newMeshctlProfileCommand } from './meshctl-install.js';
import { newMeshctlInstallCommand, newMeshctlUpgradeCommand, newMeshctlVerifyInstallCommand } from './meshctl-install-lifecycle.js';
import { newMeshctlValidateCommand } from './meshctl-validate.js';
import { newMeshctlBugReportCommand } from './meshctl-bug-report.js';
import { newMeshctlVersionCommand } from './meshctl-version.js';
import { newMeshctlXdsCommands } from './meshctl-xds.js';
import { processIo, readProcessLine, readProcessStdin, type CliIo } from '../run-cli.js';

export type { MeshctlGlobalFlags } from './meshctl-global-flags.js';

export function buildMeshctl(io: CliIo = processIo, loadSettings: () => Settings<'meshctl'> = () => loadProcessSettings('meshctl')): Command {
  const settings = loadSettings();
  const fileDefaults = readMeshctlDefaults(settings.get('MESHCONFIG'));
  const defaults = meshctlFlagDefaults(settings, fileDefaults);
  const meshNamespace = defaults.string('meshNamespace');
  const program = new Command('meshctl')
    .description('Mesh configuration command line utility for service operators to debug and diagnose their mesh.')
    .helpCommand(false)
    .option('--context <string>', 'The name of the orchestrator config context to use', fileDefaults.context ?? '')
    .option('-i, --meshNamespace <string>', 'Mesh system namespace', meshNamespace)
    .option('-c, --orchconfig <string>', 'Orchestrator configuration file', fileDefaults.orchconfig ?? '')
    .option('-n, --namespace <string>', 'Config namespace', fileDefaults.namespace ?? '')
    .addOption(new Option('--vklog <Level>', 'number for the log level verbosity. Like -v flag. ex: --vklog=9').argParser(intFlag).default(0));
  program.addCommand(
    newMeshctlExperimentalCommand(io, readProcessStdin, readProcessLine, { defaults, buildInfo: readBuildInfo }, [newMeshctlConfigCommand(io, defaults)]),
  );
  program.addCommand(newMeshctlAdminCommand(io));
  program.addCommand(
    newMeshctlAnalyzeCommand(io, { settings, buildInfo: readBuildInfo, readStdin: readProcessStdin, stdoutIsTty: process.stdout.isTTY === true }),
  );
  program.addCommand(newMeshctlBugReportCommand({ io, buildInfo: readBuildInfo }));
  program.addCommand(newMeshctlDashboardCommand(io));
  program.addCommand(newMeshctlOptionsCommand(io));
  program.addCommand(newMeshctlInstallCommand(io, readProcessLine));
  program.addCommand(newMeshctlUpgradeCommand(io, readProcessLine));
  program.addCommand(newMeshctlVerifyInstallCommand(io));
  program.addCommand(newMeshctlKubeInjectCommand(io, readProcessStdin));
  program.addCommand(newMeshctlManifestCommand(io, readProcessLine));
  program.addCommand(newMeshctlOperatorCommand(io));
  program.addCommand(newMeshctlProfileCommand(io));
  program.addCommand(newMeshctlProxyConfigCommand(io));

  program.addCommand(newMeshctlValidateCommand(io));
  const stable = [newMeshctlVersionCommand({ io, defaults, buildInfo: readBuildInfo }), newMeshctlProxyStatusCommand(io)];
  if (defaults.boolean('prefer-experimental')) {
    // As the reference: the xDS variants of proxy-status and version take the top level, the stable ones move to `legacy`.
    for (const command of newMeshctlXdsCommands({ io, defaults, buildInfo: readBuildInfo }).filter((c) => c.name() !== 'internal-debug')) {
      program.addCommand(command);
    }
    const legacy = new Command('legacy').description('Legacy command variants');
    for (const command of stable) legacy.addCommand(command);
    program.addCommand(legacy);
  } else {
    for (const command of stable) program.addCommand(command);
  }
  return program;
}
