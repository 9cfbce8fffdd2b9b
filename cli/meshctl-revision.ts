import { Command } from 'commander';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from './run-cli.js';

interface TagFlags {
  revision: string;
  overwrite: boolean;
  skipConfirmation: boolean;
  webhookName: string;
}

/** `meshctl x revision`: `list`, and the `tag` commands (set, generate, list, remove). */
export function newMeshctlRevisionCommand(io: CliIo): Command {
  const revision = new Command('revision').description('Provides information on mesh control plane revisions and their tags');
  const tag = new Command('tag').description('Commands related to mesh control plane revision tags');
  const tagFlags = (command: Command): Command =>
    command
      .option('-r, --revision <string>', 'Control plane revision to reference from a given revision tag', '')
      .option('--overwrite', 'If true, allow revision tags to be overwritten, otherwise reject revision tag updates that overwrite existing revision tags', false)
      .option('-y, --skip-confirmation', 'The skipConfirmation determines whether the user is prompted for confirmation', false)
      .option('--webhook-name <string>', 'Name to use for a revision tag\'s mutating webhook configuration', '');
  const client = async (command: Command) => {
    const { loadOrchClient, ...meshctl } = await import('../meshctl/index.js');
    return { kubeConfig: loadOrchClient(command.optsWithGlobals<MeshctlGlobalFlags>()), ...meshctl };
  };
  tag.addCommand(
    tagFlags(new Command('set').argument('<revision-tag>').description('Create or modify revision tags')).action(async (name: string, flags: TagFlags, command: Command) => {
      const { kubeConfig, setTag } = await client(command);
      io.stdout(await setTag(kubeConfig, { tag: name, revision: flags.revision, overwrite: flags.overwrite, webhookName: flags.webhookName }));
    }),
  );
  tag.addCommand(
    tagFlags(new Command('generate').argument('<revision-tag>').description('Create a revision tag and output to the command\'s stdout')).action(async (name: string, flags: TagFlags, command: Command) => {
      const { kubeConfig, generateTag } = await client(command);
      io.stdout(await generateTag(kubeConfig, { tag: name, revision: flags.revision, overwrite: flags.overwrite, webhookName: flags.webhookName }));
    }),
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
  revision.addCommand(
    new Command('list')
      .description('Show the list of control plane revisions installed in the cluster')
      .option('-o, --output <string>', 'Output format for revision description (available formats: table, json)', 'table')
      .action(async (flags: { output: string }, command: Command) => {
        const { kubeConfig, listRevisions, renderRevisionTable } = await client(command);
        const revisions = await listRevisions(kubeConfig);
        io.stdout(flags.output === 'json' ? `${JSON.stringify(revisions, null, 2)}\n` : renderRevisionTable(revisions));
      }),
  );
  revision.addCommand(tag);
  return revision;
}
