import { Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';
import { INJECTOR_CONFIG_MAP_NAME } from '../../names/index.js';

interface InjectFlags {
  filename: string;
  output: string;
  injectConfigFile: string;
  injectConfigMapName: string;
  meshConfigFile: string;
  meshConfigMapName: string;
  valuesFile: string;
  revision: string;
  webhookConfig: string;
}

const INJECT_EXAMPLES = `
Examples:
  # Update resources on the fly before applying
  kubectl apply -f <(meshctl orch-inject -f <resource.yaml>)

  # Create a persistent version of the deployment with the sidecar injected
  meshctl orch-inject -f deployment.yaml -o deployment-injected.yaml

  # Update an existing deployment
  kubectl get deployment -o yaml | meshctl orch-inject -f - | kubectl apply -f -

  # Fully offline, with the injector's templates, the mesh config and the values saved from a cluster
  kubectl -n mesh-system get cm mesh-sidecar-injector -o jsonpath="{.data.config}" > inj-template.tmpl
  kubectl -n mesh-system get cm mesh -o jsonpath="{.data.mesh}" > mesh.yaml
  kubectl -n mesh-system get cm mesh-sidecar-injector -o jsonpath="{.data.values}" > values.json
  meshctl orch-inject -f app.yaml --injectConfigFile inj-template.tmpl --meshConfigFile mesh.yaml --valuesFile values.json
`;

/** `meshctl orch-inject`: injects the sidecar into workloads read from files (unsupported resources unchanged). */
export function newMeshctlKubeInjectCommand(io: CliIo, readStdin: () => Promise<string>): Command {
  return new Command('orch-inject')
    .description(
      'Inject the mesh sidecar into orchestrator workloads (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, List); other resources pass through unchanged',
    )
    .option('-f, --filename <string>', 'Input orchestrator resource filename (- for standard input)', '')
    .option('-o, --output <string>', 'Modified output orchestrator resource filename', '')
    .option('--injectConfigFile <string>', 'Injection configuration filename; cannot be used with --injectConfigMapName', '')
    .option(
      '--injectConfigMapName <string>',
      'ConfigMap name for the injection configuration (key "config"); cannot be used with --injectConfigFile',
      INJECTOR_CONFIG_MAP_NAME,
    )
    .option('--meshConfigFile <string>', 'Mesh configuration filename; takes precedence over --meshConfigMapName if set', '')
    .option('--meshConfigMapName <string>', 'ConfigMap name for the mesh configuration (key "mesh")', 'mesh')
    .option('--valuesFile <string>', 'Injection values configuration filename', '')
    .option('-r, --revision <string>', 'Control plane revision', '')
    .option('--webhookConfig <string>', 'MutatingWebhookConfiguration name of the injector', INJECTOR_CONFIG_MAP_NAME)
    .addHelpText('after', INJECT_EXAMPLES)
    .action(async (flags: InjectFlags, command: Command) => {
      if (flags.injectConfigFile !== '' && command.getOptionValueSource('injectConfigMapName') === 'cli') {
        throw new UsageError('--injectConfigFile and --injectConfigMapName cannot be used together');
      }
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      const { kubeInject, loadKubeClient } = await import('../../meshctl/index.js');
      // Without a configured cluster the built-in defaults serve: orch-inject works on a laptop.
      const needsCluster = flags.injectConfigFile === '' || flags.meshConfigFile === '' || flags.valuesFile === '';
      const kubeConfig = needsCluster ? await clusterIfConfigured(() => loadKubeClient(global), global.orchconfig !== '') : undefined;
      await kubeInject({ filename: flags.filename, output: flags.output, readStdin, stdout: io.stdout, stderr: io.stderr }, flags, {
        kubeConfig,
        meshNamespace: global.meshNamespace,
      });
    });
}

/** `meshctl x orch-uninject`: removes what orch-inject added. */
export function newMeshctlKubeUninjectCommand(io: CliIo, readStdin: () => Promise<string>): Command {
  return new Command('orch-uninject')
    .description('Remove the mesh sidecar from orchestrator workloads injected by orch-inject')
    .option('-f, --filename <string>', 'Input orchestrator resource filename (- for standard input)', '')
    .option('-o, --output <string>', 'Modified output orchestrator resource filename', '')
    .addHelpText('after', '\nExamples:\n  meshctl experimental orch-uninject -f deployment-injected.yaml -o deployment.yaml\n')
    .action(async (flags: { filename: string; output: string }) => {
      const { kubeUninject } = await import('../../meshctl/index.js');
      await kubeUninject({ filename: flags.filename, output: flags.output, readStdin, stdout: io.stdout, stderr: io.stderr });
    });
}

async function clusterIfConfigured<T>(load: () => Promise<T>, explicit: boolean): Promise<T | undefined> {
  try {
    return await load();
  } catch (error) {
    if (explicit) throw error;
    return undefined;
  }
}
