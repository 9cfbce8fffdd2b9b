import { Command, Option } from 'commander';
import { stopSignal } from '../../runtime/index.js';
import { listenAddressFlag, stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import { chartsOption, loadInstall, manifestsOf, manifestsOption } from './meshctl-manifests-flags.js';
import type { CliIo } from '../run-cli.js';

interface OperatorFlags {
  charts?: string;
  manifests?: string;
  dryRun: boolean;
  hub: string;
  tag: string;
  imagePullSecrets?: string[];
  operatorNamespace: string;
  watchedNamespaces: string;
  revision: string;
  filename?: string[];
  force: boolean;
}

/** `meshctl operator dump|init|remove`, and `server`, which the operator's Deployment runs. */
export function newMeshctlOperatorCommand(io: CliIo): Command {
  const operator = new Command('operator').description('Commands related to the mesh operator controller');
  const chartFlags = (command: Command): Command =>
    command
      .addOption(chartsOption())
      .addOption(manifestsOption())
      .option('--dry-run', 'Console/log output only, make no changes', false)
      .option('--hub <string>', 'The hub for the operator controller image', 'unknown')
      .option('--tag <string>', 'The tag for the operator controller image', 'unknown')
      .addOption(
        new Option('--imagePullSecrets <stringSlice>', 'The imagePullSecrets are used to pull the operator image from the private registry').argParser(
          stringSliceFlag,
        ),
      )
      .option('--operatorNamespace <string>', 'The namespace the operator controller is installed into', 'mesh-operator')
      .option('-r, --revision <string>', 'Target revision for the operator', '');
  const chartOptions = (flags: OperatorFlags) => ({
    manifestsDir: manifestsOf(flags),
    hub: flags.hub,
    tag: flags.tag,
    imagePullSecrets: flags.imagePullSecrets ?? [],
    operatorNamespace: flags.operatorNamespace,
    watchedNamespaces: flags.watchedNamespaces,
    revision: flags.revision,
  });
  const cluster = async (command: Command) => {
    const install = await loadInstall();
    return { ...install, cluster: install.clusterObjectsOf(await install.loadKubeClient(command.optsWithGlobals<MeshctlGlobalFlags>())) };
  };

  operator.addCommand(
    chartFlags(new Command('dump').description('Dumps the mesh operator controller manifest')).action(async (flags: OperatorFlags) => {
      const { renderOperator } = await loadInstall();
      io.stdout(await renderOperator(chartOptions({ ...flags, watchedNamespaces: 'mesh-system' })));
    }),
  );
  operator.addCommand(
    chartFlags(new Command('init').description('Installs the mesh operator controller in the cluster'))
      .addOption(new Option('-f, --filename <stringSlice>', 'Path to file containing MeshOperator custom resource').argParser(stringSliceFlag))
      .option(
        '--watchedNamespaces <string>',
        "The namespaces the operator controller watches, could be namespace list separated by comma, eg. 'ns1,ns2'",
        'mesh-system',
      )
      .action(async (flags: OperatorFlags, command: Command) => {
        const { initOperator, cluster: objects } = await cluster(command);
        await initOperator({
          ...chartOptions(flags),
          cluster: objects,
          files: flags.filename ?? [],
          dryRun: flags.dryRun,
          progress: (line) => io.stdout(`${line}\n`),
        });
      }),
  );
  operator.addCommand(
    new Command('remove')
      .description('Removes the mesh operator controller from the cluster')
      .option('--dry-run', 'Console/log output only, make no changes', false)
      .option('--force', 'Proceed even with validation errors', false)
      .option('--operatorNamespace <string>', 'The namespace the operator controller is installed into', 'mesh-operator')
      .option('-r, --revision <string>', 'Target revision for the operator', '')
      .action(async (flags: OperatorFlags, command: Command) => {
        const { removeOperator, cluster: objects } = await cluster(command);
        await removeOperator({
          ...chartOptions({ ...flags, hub: 'unknown', tag: 'unknown', watchedNamespaces: 'mesh-system' }),
          cluster: objects,
          force: flags.force,
          dryRun: flags.dryRun,
          progress: (line) => io.stdout(`${line}\n`),
        });
      }),
  );
  const server = new Command('server')
    .description('Runs the mesh operator controller (what its Deployment runs)')
    .addOption(manifestsOption())
    .option('--watchedNamespaces <string>', 'The namespaces whose MeshOperator resources are reconciled, comma separated', 'mesh-system')
    .addOption(new Option('--monitoringAddr <string>', 'The address of the metrics endpoint').argParser(listenAddressFlag).default(':8383'))
    .option('-r, --revision <string>', 'Reconcile the MeshOperators of this revision only', '')
    .action(async (flags: { manifests?: string; watchedNamespaces: string; monitoringAddr: string; revision: string }, command: Command) => {
      const { runOperatorServer, loadKubeClient } = await loadInstall();
      const { signal, release } = stopSignal(undefined);
      try {
        await runOperatorServer(
          {
            kubeConfig: await loadKubeClient(command.optsWithGlobals<MeshctlGlobalFlags>()),
            watchedNamespaces: flags.watchedNamespaces.split(',').filter((ns) => ns !== ''),
            manifestsDir: manifestsOf({ ...flags }),
            revision: flags.revision,
            monitoringAddr: flags.monitoringAddr,
          },
          signal,
        );
      } finally {
        release();
      }
    });
  operator.addCommand(server, { hidden: true });
  return operator;
}
