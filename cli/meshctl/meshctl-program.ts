import { Command, Option } from 'commander';
import { loadProcessSettings, readBuildInfo, type Settings } from '../../runtime/index.js';
import { intFlag } from '../flags.js';
import { newMeshctlAdminCommand } from './meshctl-admin.js';
import { newMeshctlAnalyzeCommand } from './meshctl-analyze.js';
import { newMeshctlDashboardCommand } from './meshctl-dashboard.js';
import { readMeshctlDefaults } from './meshctl-defaults.js';
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
import { processIo, readProcessLine, readProcessStdin, type CliIo } from '../run-cli.js';

export type { MeshctlGlobalFlags } from './meshctl-global-flags.js';

export function buildMeshctl(io: CliIo = processIo, loadSettings: () => Settings<'meshctl'> = () => loadProcessSettings('meshctl')): Command {
  const settings = loadSettings();
  const fileDefaults = readMeshctlDefaults(settings.get('MESHCONFIG'));
  // MESHCTL_MESHNAMESPACE overrides the config file, which overrides the built-in default.
  const meshNamespace = settings.isSet('MESHCTL_MESHNAMESPACE')
    ? settings.get('MESHCTL_MESHNAMESPACE')
    : (fileDefaults.meshNamespace ?? settings.get('MESHCTL_MESHNAMESPACE'));
  const program = new Command('meshctl')
    .description('Mesh configuration command line utility for service operators to debug and diagnose their mesh.')
    .helpCommand(false)
    .option('--context <string>', 'The name of the orchestrator config context to use', fileDefaults.context ?? '')
    .option('-i, --meshNamespace <string>', 'Mesh system namespace', meshNamespace)
    .option('-c, --orchconfig <string>', 'Orchestrator configuration file', fileDefaults.orchconfig ?? '')
    .option('-n, --namespace <string>', 'Config namespace', fileDefaults.namespace ?? '')
    .addOption(new Option('--vklog <Level>', 'number for the log level verbosity. Like -v flag. ex: --vklog=9').argParser(intFlag).default(0));
  program.addCommand(
    newMeshctlExperimentalCommand(io, readProcessStdin, readProcessLine, { settings, buildInfo: readBuildInfo }, [
      newMeshctlConfigCommand(io, settings, fileDefaults),
    ]),
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
  program.addCommand(newMeshctlProxyStatusCommand(io));
  program.addCommand(newMeshctlValidateCommand(io));
  program.addCommand(newMeshctlVersionCommand({ io, settings, buildInfo: readBuildInfo }));
  return program;
}
