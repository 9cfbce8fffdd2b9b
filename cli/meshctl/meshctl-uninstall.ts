import { Command, Option } from 'commander';
import { stringArrayFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { forceOf, loadInstall, manifestsOf, manifestsOption, type ManifestFlags } from './meshctl-manifests-flags.js';
import type { CliIo } from '../run-cli.js';

interface UninstallFlags extends Pick<ManifestFlags, 'manifests'> {
  dryRun: boolean;
  filename: string;
  force: boolean;
  purge: boolean;
  revision: string;
  set?: string[];
  skipConfirmation: boolean;
  verbose: boolean;
}

/** `meshctl x uninstall`: one revision, or with `--purge` everything of the mesh. */
export function newMeshctlUninstallCommand(io: CliIo, readLine: () => Promise<string>): Command {
  return new Command('uninstall')
    .description('Uninstalls the mesh control plane (a revision, or everything with --purge)')
    .option('--dry-run', 'Console/log output only, make no changes', false)
    .option('-f, --filename <string>', 'The filename of the MeshOperator CR', '')
    .option('--force', 'Proceed even with validation errors', false)
    .addOption(manifestsOption())
    .option('--purge', 'Delete all mesh related sources for all versions', false)
    .option('-r, --revision <string>', 'Target control plane revision for the command', '')
    .addOption(new Option('-s, --set <stringArray>', 'Override a MeshOperator value').argParser(stringArrayFlag))
    .option('-y, --skip-confirmation', 'The skipConfirmation determines whether the user is prompted for confirmation', false)
    .option('-v, --verbose', 'Verbose output', false)
    .action(async (flags: UninstallFlags, cmd: Command) => {
      const global = cmd.optsWithGlobals<MeshctlGlobalFlags>();
      const { buildOperatorConfig, clusterObjectsOf, loadKubeClient, orphanedProxiesWarning, prunedResourcesNotice, requireUninstallTarget, uninstall } =
        await loadInstall();
      let revision = flags.revision || ((flags.set ?? []).find((s) => s.startsWith('revision='))?.slice('revision='.length) ?? '');
      requireUninstallTarget(revision, flags.filename === '' ? [] : [flags.filename], flags.purge);
      // The file names the installation: its revision (over which --revision and --set win) is the one removed.
      if (flags.filename !== '')
        revision =
          buildOperatorConfig({
            manifestsDir: manifestsOf(flags),
            files: [flags.filename],
            sets: flags.set ?? [],
            revision: flags.revision,
            ...forceOf(io, flags.force),
          }).spec?.revision ?? '';
      const cluster = clusterObjectsOf(await loadKubeClient(global));
      if (flags.verbose && !flags.purge) io.stdout(await prunedResourcesNotice(cluster, revision));
      io.stdout(await orphanedProxiesWarning(cluster, revision, flags.purge));
      if (!flags.skipConfirmation && !flags.dryRun) {
        io.stdout(
          `All mesh resources ${flags.purge ? 'of every revision' : `of revision ${revision || 'default'}`} will be pruned from the cluster\nProceed? (y/N) `,
        );
        if (!/^y(es)?$/i.test((await readLine()).trim())) {
          io.stdout('Cancelled.\n');
          return;
        }
      }
      await uninstall({ cluster, revision, purge: flags.purge, dryRun: flags.dryRun, progress: (line) => io.stdout(`${line}\n`) });
    });
}
