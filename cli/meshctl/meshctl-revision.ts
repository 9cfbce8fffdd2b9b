import { Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { manifestsOf, manifestsOption, type ManifestFlags } from './meshctl-manifests-flags.js';
import type { CliIo } from '../run-cli.js';

interface TagFlags {
  revision: string;
  overwrite: boolean;
  skipConfirmation: boolean;
  webhookName: string;
}

interface DescribeFlags extends Pick<ManifestFlags, 'manifests' | 'charts'> {
  output: string;
  verbose: boolean;
}

/** `meshctl x revision`: `list`, `describe`, and the `tag` commands (set, generate, list, remove). */
export function newMeshctlRevisionCommand(io: CliIo): Command {
  const revision = new Command('revision').description('Provides information on mesh control plane revisions and their tags');
  const tag = new Command('tag').description('Commands related to mesh control plane revision tags');
  const tagFlags = (command: Command): Command =>
    command
      .option('-r, --revision <string>', 'Control plane revision to reference from a given revision tag', '')
      .option(
        '--overwrite',
        'If true, allow revision tags to be overwritten, otherwise reject revision tag updates that overwrite existing revision tags',
        false,
      )
      .option('-y, --skip-confirmation', 'The skipConfirmation determines whether the user is prompted for confirmation', false)
      .option('--webhook-name <string>', "Name to use for a revision tag's mutating webhook configuration", '');
  const client = async (command: Command) => {
    const { loadKubeClient, ...meshctl } = await import('../../meshctl/index.js');
    return { kubeConfig: await loadKubeClient(command.optsWithGlobals<MeshctlGlobalFlags>()), ...meshctl };
  };
  tag.addCommand(
    tagFlags(new Command('set').argument('<revision-tag>').description('Create or modify revision tags')).action(
      async (name: string, flags: TagFlags, command: Command) => {
        const { kubeConfig, setTag } = await client(command);
        io.stdout(
          await setTag(kubeConfig, {
            tag: name,
            revision: flags.revision,
            overwrite: flags.overwrite,
            webhookName: flags.webhookName,
            skipConfirmation: flags.skipConfirmation,
          }),
        );
      },
    ),
  );
  tag.addCommand(
    tagFlags(new Command('generate').argument('<revision-tag>').description("Create a revision tag and output to the command's stdout")).action(
      async (name: string, flags: TagFlags, command: Command) => {
        const { kubeConfig, generateTag } = await client(command);
        const { yaml, warning } = await generateTag(kubeConfig, {
          tag: name,
          revision: flags.revision,
          overwrite: flags.overwrite,
          webhookName: flags.webhookName,
          skipConfirmation: flags.skipConfirmation,
        });
        if (warning !== undefined) io.stderr(warning);
        io.stdout(yaml);
      },
    ),
  );
  tag.addCommand(
    new Command('list')
      .alias('show')
      .description('List existing revision tags')
      .action(async (_flags: unknown, command: Command) => {
        const { kubeConfig, listTags } = await client(command);
        io.stdout(await listTags(kubeConfig));
      }),
  );
  tag.addCommand(
    new Command('remove')
      .alias('delete')
      .argument('<revision-tag>')
      .description('Remove revision tag')
      .option('-y, --skip-confirmation', 'Remove the tag even while namespaces use it', false)
      .action(async (name: string, flags: { skipConfirmation: boolean }, command: Command) => {
        const { kubeConfig, removeTag } = await client(command);
        io.stdout(await removeTag(kubeConfig, name, flags.skipConfirmation));
      }),
  );
  const outputFormat = (output: string): 'table' | 'json' => {
    if (output === 'table' || output === 'json') return output;
    throw new UsageError(`-o/--output: unknown format ${output}: it should be table or json`);
  };
  const listFlags = (command: Command): Command =>
    command
      .option('-o, --output <string>', 'Output format for revision description (available formats: table, json)', 'table')
      .option('-v, --verbose', 'Enable verbose output', false)
      .addOption(manifestsOption());
  // Seed 3 gives the group -d, -o and -v too: `x revision -o json list` as well as `x revision list -o json`.
  listFlags(revision);
  const withGroupFlags = (own: DescribeFlags, command: Command): DescribeFlags => {
    const group = command.parent?.opts<DescribeFlags>() ?? own;
    const pick = <K extends 'output' | 'verbose' | 'manifests'>(key: K): DescribeFlags[K] =>
      command.getOptionValueSource(key) === 'cli' ? own[key] : (group[key] ?? own[key]);
    return { ...own, output: pick('output'), verbose: pick('verbose'), ...(pick('manifests') !== undefined ? { manifests: pick('manifests') } : {}) };
  };
  revision.addCommand(
    listFlags(new Command('list').description('Show the list of control plane revisions installed in the cluster')).action(
      async (ownFlags: DescribeFlags, command: Command) => {
        const flags = withGroupFlags(ownFlags, command);
        const format = outputFormat(flags.output);
        const { kubeConfig, listRevisions, renderRevisionTable, describeRevisions, renderRevisionSummaries } = await client(command);
        const revisions = await listRevisions(kubeConfig, flags.verbose ? manifestsOf(flags) : undefined);
        if (format === 'json') return io.stdout(`${JSON.stringify(revisions, null, 2)}\n`);
        io.stdout(renderRevisionTable(revisions, flags.verbose));
        if (flags.verbose && revisions.length > 0) {
          const described = await describeRevisions(
            kubeConfig,
            revisions.map((r) => r.revision),
            { manifestsDir: manifestsOf(flags), verbose: false, now: Date.now() },
          );
          io.stdout(`\n${renderRevisionSummaries(described)}`);
        }
      },
    ),
  );
  revision.addCommand(
    listFlags(
      new Command('describe')
        .argument('<revision>')
        .description('Show details of a revision: its installation and customizations, webhooks, meshd and gateway pods'),
    ).action(async (name: string, ownFlags: DescribeFlags, command: Command) => {
      const flags = withGroupFlags(ownFlags, command);
      const format = outputFormat(flags.output);
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
        throw new UsageError(`<revision> ${name}: invalid revision format: a DNS label (lowercase letters, digits and -)`);
      const { kubeConfig, describeRevision, renderRevisionDescription } = await client(command);
      const description = await describeRevision(kubeConfig, name, { manifestsDir: manifestsOf(flags), verbose: flags.verbose, now: Date.now() });
      io.stdout(format === 'json' ? `${JSON.stringify(description, null, 2)}\n` : renderRevisionDescription(description));
    }),
  );
  revision.addCommand(tag);
  return revision;
}
