import { Command } from 'commander';
import { boolOption, intFlag, stringSliceFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface GroupCreateFlags {
  name?: string;
  labels?: string[];
  annotations?: string[];
  ports?: string[];
  serviceAccount: string;
}

interface EntryConfigureFlags {
  file: string;
  name: string;
  output: string;
  clusterID: string;
  tokenDuration: number;
  ingressService: string;
  ingressIP: string;
  autoregister: boolean;
  captureDns: boolean;
  workloadIP: string;
  revision: string;
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
  workload.addCommand(new Command('entry').description('Commands dealing with WorkloadEntry resources').addCommand(newEntryConfigureCommand(io)));
  return workload;
}

function newEntryConfigureCommand(io: CliIo): Command {
  return new Command('configure')
    .description('Generates all the required configuration files for a workload instance running on a VM or non-Kubernetes environment')
    .addHelpText(
      'after',
      '\nGenerates the configuration files of a workload instance on a VM or outside Kubernetes from a WorkloadGroup:\nthe mesh config (mesh.yaml), cluster.env, the root certificate, a service account token, and hosts.\nReads the WorkloadGroup from a file (-f) or from the API server (--name and -n).\n\nExamples:\n  # from a local WorkloadGroup artifact\n  meshctl x workload entry configure -f workloadgroup.yaml -o config\n\n  # from the API server\n  meshctl x workload entry configure --name foo --namespace bar -o config\n',
    )
    .option('-f, --file <string>', 'filename of the WorkloadGroup artifact. Leave this field empty if using the API server', '')
    .option('--name <string>', 'The name of the workload group', '')
    .option('-o, --output <string>', 'Output directory for generated files', '')
    .option('--clusterID <string>', 'The ID used to identify the cluster', 'Kubernetes')
    .option('--tokenDuration <int>', 'The token duration in seconds', intFlag, 3600)
    .option(
      '--ingressService <string>',
      'Name of the Service to be used as the ingress gateway, in the format <service>.<namespace>. If no namespace is provided, the mesh namespace (--meshNamespace) is used.',
      'mesh-eastwestgateway',
    )
    .option('--ingressIP <string>', 'IP address of the ingress gateway', '')
    .addOption(boolOption('--autoregister', 'Creates a WorkloadEntry upon connection to meshd (if enabled in pilot-discovery).', false))
    .addOption(boolOption('--capture-dns', 'Enables the capture of outgoing DNS packets on port 53, redirecting to pilot-agent', true))
    .option('--workloadIP <string>', "IP address of the workload instance: the agent's INSTANCE_IP, written to sidecar.env", '')
    .option('-r, --revision <string>', 'Control plane revision', '')
    .action(async (options: EntryConfigureFlags, command: Command) => {
      const meshctl = await import('../../meshctl/index.js');
      const flags = command.optsWithGlobals<MeshctlGlobalFlags>();
      io.stdout(
        await meshctl.configureWorkloadEntry(
          () => meshctl.loadKubeClient(flags),
          {
            file: options.file,
            name: options.name,
            namespace: flags.namespace,
            output: options.output,
            meshNamespace: flags.meshNamespace,
            revision: options.revision,
            clusterId: options.clusterID,
            tokenDurationSeconds: options.tokenDuration,
            ingressIp: options.ingressIP,
            ingressService: options.ingressService,
            captureDns: options.captureDns,
            autoregister: options.autoregister,
            workloadIp: options.workloadIP,
          },
          (line) => io.stderr(`${line}\n`),
        ),
      );
    });
}
