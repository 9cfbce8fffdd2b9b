import { Command, Option } from 'commander';
import { ExitStatus, UsageError } from '../../runtime/index.js';
import { stringArrayFlag, stringSliceFlag } from '../flags.js';
import { chartsOption, forceOf, groupDryRun, loadInstall, manifestsOf, manifestsOption, type ManifestFlags } from './meshctl-manifests-flags.js';
import { newMeshctlInstallCommand } from './meshctl-install-lifecycle.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl profile`: list, dump and diff the installation profiles. */
export function newMeshctlProfileCommand(io: CliIo): Command {
  // Seed 3's group flag; profile's commands only read and print, so it has nothing to leave undone.
  const profile = new Command('profile')
    .description('Commands related to mesh configuration profiles')
    .option('--dry-run', 'Console/log output only, make no changes', false);
  profile.addCommand(
    new Command('list')
      .description('Lists available mesh configuration profiles')
      .addOption(manifestsOption())
      .addOption(chartsOption())
      .action(async (flags: ManifestFlags) => {
        const { renderProfileList } = await import('../../meshctl/index.js');
        io.stdout(renderProfileList(manifestsOf(flags)));
      }),
  );
  profile.addCommand(
    new Command('dump')
      .argument('[profile]', 'the profile to dump; default: the one the files name, else default')
      .description('Dumps a mesh configuration profile')
      .option('-p, --config-path <string>', 'The path the root of the output configuration is set to (e.g. spec.values.global)', '')
      .addOption(new Option('-f, --filename <stringSlice>', 'Overlay files, applied left to right').argParser(stringSliceFlag))
      .addOption(manifestsOption())
      .addOption(chartsOption())
      .addOption(new Option('-o, --output <string>', 'Output format: one of json|yaml|flags').default('yaml'))
      .action(async (name: string | undefined, flags: ManifestFlags & { configPath: string; output: string }) => {
        if (!['yaml', 'json', 'flags'].includes(flags.output)) throw new UsageError(`--output ${flags.output}: want json, yaml or flags`, { exitCode: 64 });
        const { buildOperatorConfig, renderProfileDump } = await loadInstall();
        const config = buildOperatorConfig({ manifestsDir: manifestsOf(flags), files: flags.filename ?? [], sets: [], ...(name ? { profile: name } : {}) });
        io.stdout(renderProfileDump(config, flags.output as 'yaml' | 'json' | 'flags', flags.configPath));
      }),
  );
  profile.addCommand(
    new Command('diff')
      .argument('<profile-or-file-1>')
      .argument('<profile-or-file-2>')
      .description('Diffs two mesh configuration profiles')
      .addOption(manifestsOption())
      .addOption(chartsOption())
      .action(async (left: string, right: string, flags: ManifestFlags) => {
        const { renderProfileDiff } = await import('../../meshctl/index.js');
        io.stdout(renderProfileDiff(manifestsOf(flags), left, right));
      }),
  );
  return profile;
}

/** `meshctl manifest`: generate the install manifests. */
export function newMeshctlManifestCommand(io: CliIo, readLine: () => Promise<string>): Command {
  const manifest = new Command('manifest')
    .description('Commands related to mesh manifests')
    .option('--dry-run', 'Console/log output only, make no changes (for generate -o and install)', false);
  manifest.addCommand(newMeshctlInstallCommand(io, readLine, 'install'));
  manifest.addCommand(
    new Command('diff')
      .argument('<file|dir>')
      .argument('<file|dir>')
      .description('Compare manifests and generate diff: the changed paths of each object, as OLD-VALUE -> NEW-VALUE')
      .option('-r, --directory', 'Compare directory.', false)
      .option('-v, --verbose', 'Verbose output.', false)
      .option(
        '--select <string>',
        'Constrain the list of resources to compare to only the ones in this list, ignoring all others: Kind:Namespace:Name items, comma separated, "*" a wildcard',
        '::',
      )
      .option(
        '--ignore <string>',
        'Ignore all listed items during comparison, using the same list format as --select (a fourth part names a path to ignore)',
        '',
      )
      .option('--rename <string>', 'Rename resources before comparison: A->B pairs, comma separated, e.g. Service:*:meshd->Service:*:mesh-control', '')
      .action(async (a: string, b: string, flags: { directory: boolean; verbose: boolean; select: string; ignore: string; rename: string }) => {
        const { diffManifests, readManifests } = await import('../../meshctl/index.js');
        const diff = diffManifests(readManifests(a, flags.directory), readManifests(b, flags.directory), flags);
        if (diff === '') {
          io.stdout('Manifests are identical\n');
          return;
        }
        io.stdout(`Differences in manifests are:\n${diff}\n`);
        throw new ExitStatus(1);
      }),
  );
  manifest.addCommand(
    new Command('generate')
      .description('Generates a mesh install manifest')
      .addOption(
        new Option('-f, --filename <stringSlice>', 'Path to file containing MeshOperator custom resource; overlays are applied left to right').argParser(
          stringSliceFlag,
        ),
      )
      .addOption(
        new Option(
          '-s, --set <stringArray>',
          'Override a MeshOperator value, e.g. to choose a profile (--set profile=demo) or a value (--set values.global.hub=x); dots in names escaped with a backslash',
        ).argParser(stringArrayFlag),
      )
      .option('-r, --revision <string>', 'Target control plane revision for the command', '')
      .addOption(manifestsOption())
      .addOption(chartsOption())
      .option('--dry-run', 'Console/log output only, make no changes', false)
      .option('--force', 'Proceed even with validation errors', false)
      .addOption(
        new Option('--component <stringSlice>', 'Specify which component to generate manifests for (Base, Pilot, IngressGateways, EgressGateways)').argParser(
          stringSliceFlag,
        ),
      )
      .option('-o, --output <string>', 'Manifest output directory path', '')
      .action(async (flags: ManifestFlags & { component?: string[]; dryRun: boolean; force: boolean; output: string }, command: Command) => {
        const { generateManifests, manifestText, writeManifestDir } = await import('../../meshctl/index.js');
        const rendered = await generateManifests({
          manifestsDir: manifestsOf(flags),
          files: flags.filename ?? [],
          sets: flags.set ?? [],
          revision: flags.revision,
          components: flags.component ?? [],
          ...forceOf(io, flags.force),
        });
        if (flags.output === '') io.stdout(manifestText(rendered));
        // --dry-run makes no changes: the files -o would write are named, not written.
        else if (flags.dryRun || groupDryRun(command))
          io.stdout(
            writeManifestDir(flags.output, rendered, { dryRun: true })
              .map((file) => `would write ${file}\n`)
              .join(''),
          );
        else writeManifestDir(flags.output, rendered);
      }),
  );
  return manifest;
}
