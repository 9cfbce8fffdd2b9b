import { Command } from 'commander';
import { stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface GroupCreateFlags {
  name?: string;
  labels?: string[];
  annotations?: string[];
  ports?: string[];
  serviceAccount: string;
}

/** `meshctl x workload`: WorkloadGroups and WorkloadEntries for workloads outside the cluster (VMs). */
export function newMeshctlWorkloadCommand(io: CliIo): Command {
  const workload = new Command('workload').description(
    'Commands to assist in configuring and deploying workloads running on VMs and other non-Kubernetes environments',
  );
  const group = new Command('group').description('Commands dealing with WorkloadGroup resources');
  group.addCommand(
    new Command('create')
      .description('Creates a WorkloadGroup resource that provides a template for associated WorkloadEntries')
      .addHelpText(
        'after',
        "\nThe default output is serialized YAML, which can be piped into 'kubectl apply -f -' to send the artifact to the API Server.\n\nExamples:\n  meshctl x workload group create --name foo --namespace bar --labels app=foo,bar=baz --ports grpc=3550,http=8080 --annotations annotation=foobar --serviceAccount sa\n",
      )
      .option('--name <string>', 'The name of the workload group')
      .option('-l, --labels <strings>', 'The labels to apply to the workload instances; e.g. -l env=prod,vers=2', stringSliceFlag)
      .option('-a, --annotations <strings>', 'The annotations to apply to the workload instances', stringSliceFlag)
      .option('-p, --ports <strings>', 'The incoming ports exposed by the workload instance', stringSliceFlag)
      .option('-s, --serviceAccount <string>', 'The service identity to associate with the workload instances', 'default')
      .action(async (options: GroupCreateFlags, command: Command) => {
        const { workloadGroupYaml } = await import('../../meshctl/index.js');
        const { namespace } = command.optsWithGlobals<MeshctlGlobalFlags>();
        io.stdout(
          workloadGroupYaml({
            name: options.name ?? '',
            namespace,
            labels: options.labels ?? [],
            annotations: options.annotations ?? [],
            ports: options.ports ?? [],
            serviceAccount: options.serviceAccount,
          }),
        );
      }),
  );
  workload.addCommand(group);
  return workload;
}
