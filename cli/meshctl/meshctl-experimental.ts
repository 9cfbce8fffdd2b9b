import { Command } from 'commander';
import { newMeshctlCheckInjectCommand } from './meshctl-check-inject.js';
import { newMeshctlAuthzCommand, newMeshctlDescribeCommand } from './meshctl-describe.js';
import { newMeshctlMtlsCommand } from './meshctl-mtls.js';
import { newMeshctlKubeUninjectCommand } from './meshctl-inject.js';
import { newMeshctlMetricsCommand } from './meshctl-metrics.js';
import { newMeshctlUninstallCommand } from './meshctl-uninstall.js';
import { newMeshctlPrecheckCommand } from './meshctl-precheck.js';
import { newMeshctlRevisionCommand } from './meshctl-revision.js';
import { newMeshctlWaitCommand } from './meshctl-wait.js';
import { newMeshctlWorkloadCommand } from './meshctl-workload.js';
import { newMeshctlAddToMeshCommand, newMeshctlRemoveFromMeshCommand } from './meshctl-add-to-mesh.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { newMeshctlXdsCommands, type MeshctlXdsDeps } from './meshctl-xds.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl experimental` (`x`): commands that may still change. */
export function newMeshctlExperimentalCommand(
  io: CliIo,
  readStdin: () => Promise<string>,
  readLine: () => Promise<string>,
  xds: Omit<MeshctlXdsDeps, 'io'>,
  more: readonly Command[] = [],
): Command {
  const experimental = new Command('experimental').alias('x').description('Experimental commands that may be modified or deprecated');
  const injector = new Command('injector').description('List sidecar injector and sidecar versions');
  injector.addCommand(
    new Command('list')
      .description('List sidecar injector and sidecar versions')
      .addHelpText('after', '\nExamples:\n  meshctl experimental injector list\n')
      .action(async (_options: unknown, command: Command) => {
        const flags = command.optsWithGlobals<MeshctlGlobalFlags>();
        const { listInjectors, loadKubeClient } = await import('../../meshctl/index.js');
        io.stdout(await listInjectors(await loadKubeClient(flags), flags.meshNamespace));
      }),
  );
  experimental.addCommand(injector);
  experimental.addCommand(newMeshctlKubeUninjectCommand(io, readStdin));
  experimental.addCommand(newMeshctlUninstallCommand(io, readLine));
  experimental.addCommand(newMeshctlRevisionCommand(io));
  experimental.addCommand(newMeshctlPrecheckCommand(io));
  experimental.addCommand(newMeshctlDescribeCommand(io));
  experimental.addCommand(newMeshctlAuthzCommand(io, readStdin));
  experimental.addCommand(newMeshctlMtlsCommand(io));
  experimental.addCommand(newMeshctlWaitCommand(io));
  experimental.addCommand(newMeshctlCheckInjectCommand(io));
  experimental.addCommand(newMeshctlMetricsCommand(io));
  experimental.addCommand(newMeshctlWorkloadCommand(io));
  experimental.addCommand(newMeshctlAddToMeshCommand(io));
  experimental.addCommand(newMeshctlRemoveFromMeshCommand(io));
  for (const command of newMeshctlXdsCommands({ ...xds, io })) experimental.addCommand(command);
  for (const command of more) experimental.addCommand(command);
  return experimental;
}
