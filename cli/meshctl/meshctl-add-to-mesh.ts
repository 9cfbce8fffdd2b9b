import { Command } from 'commander';
import { stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';
import { newAddWorkloadCommands, newRemoveWorkloadCommands, withInjectGroupFlags } from './meshctl-mesh-workloads.js';

interface ExternalServiceFlags {
  labels?: string[];
  annotations?: string[];
  serviceaccount: string;
}

/** `meshctl x add-to-mesh` (`add`): restarts a Deployment's or a Service's pods with the sidecar, or adds an external service. */
export function newMeshctlAddToMeshCommand(io: CliIo): Command {
  const add = withInjectGroupFlags(new Command('add-to-mesh').alias('add').description('Add workloads into the mesh'));
  for (const command of newAddWorkloadCommands(io)) add.addCommand(command);
  add.addCommand(
    new Command('external-service')
      .alias('es')
      // Optional to commander: a missing one is reported as the reference reports it.
      .argument('[svcname]', 'the name of the service (and of its Kubernetes Service)')
      .argument('[ip]', 'the addresses of the service, comma-separated')
      .argument('[ports...]', '[name1:]port1 [[name2:]port2] …, the name being the protocol')
      .description('Add external service (e.g. services running on a VM) to the mesh')
      .addHelpText(
        'after',
        '\nAdds a MESH_INTERNAL ServiceEntry `mesh-expansion-<svcname>` with an endpoint per address, and a Service <svcname> without a selector.\nSee also `meshctl experimental remove-from-mesh external-service`, which does the reverse.\n\nExamples:\n  # Control how meshed pods contact 172.12.23.125 and .126\n  meshctl experimental add-to-mesh external-service vmhttp 172.12.23.125,172.12.23.126 \\\n     http:9080 tcp:8888 --labels app=test,version=v1 --annotations env=stage --serviceaccount stageAdmin\n',
      )
      .option('-l, --labels <strings>', 'List of labels to apply if creating a service/endpoint; e.g. -l env=prod,vers=2', stringSliceFlag)
      .option('-a, --annotations <strings>', 'List of string annotations to apply if creating a service/endpoint; e.g. -a foo=bar,x=y', stringSliceFlag)
      .option('-s, --serviceaccount <string>', 'Service account to link to the service', 'default')
      .action(async (name: string | undefined, ip: string | undefined, ports: string[], options: ExternalServiceFlags, command: Command) => {
        const meshctl = await import('../../meshctl/index.js');
        const parsed = meshctl.parseExternalServiceArgs([name, ip, ...ports].filter((arg): arg is string => arg !== undefined));
        const flags = command.optsWithGlobals<MeshctlGlobalFlags>();
        const kubeConfig = await meshctl.loadKubeClient(flags);
        io.stdout(
          await meshctl.addExternalService(kubeConfig, {
            ...parsed,
            namespace: meshctl.namespaceOf(kubeConfig, flags.namespace),
            labels: meshctl.keyValueMap(options.labels ?? []),
            annotations: meshctl.keyValueMap(options.annotations ?? []),
            serviceAccount: options.serviceaccount,
          }),
        );
      }),
  );
  return add;
}

/** `meshctl x remove-from-mesh` (`rm`): the reverse of add-to-mesh. */
export function newMeshctlRemoveFromMeshCommand(io: CliIo): Command {
  const remove = new Command('remove-from-mesh').alias('rm').description('Remove workloads from the mesh');
  for (const command of newRemoveWorkloadCommands(io)) remove.addCommand(command);
  remove.addCommand(
    new Command('external-service')
      .alias('es')
      .argument('<svcname>', 'the external service to remove')
      .description('Remove the ServiceEntry and the Kubernetes Service of an external service from the mesh')
      .addHelpText('after', '\nExamples:\n  meshctl experimental remove-from-mesh external-service vmhttp\n')
      .action(async (name: string, _options: unknown, command: Command) => {
        const meshctl = await import('../../meshctl/index.js');
        const flags = command.optsWithGlobals<MeshctlGlobalFlags>();
        const kubeConfig = await meshctl.loadKubeClient(flags);
        io.stdout(await meshctl.removeExternalService(kubeConfig, meshctl.namespaceOf(kubeConfig, flags.namespace), name));
      }),
  );
  return remove;
}
