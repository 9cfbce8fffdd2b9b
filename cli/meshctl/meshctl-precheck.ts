import { Command } from 'commander';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl x precheck`: can the mesh be installed or upgraded on this cluster? */
export function newMeshctlPrecheckCommand(io: CliIo): Command {
  return new Command('precheck')
    .description('Check whether the mesh can safely be installed or upgraded')
    .addHelpText(
      'after',
      '\nExamples:\n  # Verify that the mesh can be installed or upgraded\n  meshctl x precheck\n\n  # Check for a canary revision\n  meshctl x precheck -r canary\n',
    )
    .option('-r, --revision <string>', 'Control plane revision', '')
    .option('--skip-controlplane', 'skip checking the control plane', false)
    .action(async (flags: { revision: string; skipControlplane: boolean }, command: Command) => {
      const globals = command.optsWithGlobals<MeshctlGlobalFlags>();
      const { loadKubeClient, precheck, renderPrecheck } = await import('../../meshctl/index.js');
      const messages = await precheck(await loadKubeClient(globals), {
        revision: flags.revision,
        meshNamespace: globals.meshNamespace,
        skipControlPlane: flags.skipControlplane,
      });
      const report = renderPrecheck(messages);
      io.stdout(report.stdout);
      io.stderr(report.stderr);
      if (report.failure) throw report.failure;
    });
}
