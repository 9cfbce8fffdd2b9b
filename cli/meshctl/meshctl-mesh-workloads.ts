import { Command } from 'commander';
import { INJECTOR_CONFIG_MAP_NAME } from '../../names/index.js';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** The Inject group, declared on `x add-to-mesh` for its subcommands (the reference's persistent flags). */
interface InjectGroupFlags extends MeshctlGlobalFlags {
  injectConfigFile: string;
  injectConfigMapName: string;
  meshConfigFile: string;
  meshConfigMapName: string;
  valuesFile: string;
}

const REQUIREMENTS = 'See https://mesh.io/latest/docs/ops/deployment/requirements/';

/** Adds the Inject group of flags to `x add-to-mesh`. */
export function withInjectGroupFlags(command: Command): Command {
  return command
    .option('--meshConfigFile <string>', 'Mesh configuration filename. Takes precedence over --meshConfigMapName if set', '')
    .option('--injectConfigFile <string>', 'Injection configuration filename. Cannot be used with --injectConfigMapName', '')
    .option('--valuesFile <string>', 'Injection values configuration filename.', '')
    .option('--meshConfigMapName <string>', 'ConfigMap name for the mesh configuration, key should be "mesh"', 'mesh')
    .option('--injectConfigMapName <string>', 'ConfigMap name for the sidecar injection, key should be "config".', INJECTOR_CONFIG_MAP_NAME);
}

/** `x add-to-mesh service` and `x add-to-mesh deployment`: restart pods with the sidecar. */
export function newAddWorkloadCommands(io: CliIo): Command[] {
  const command = (kind: 'service' | 'deployment', aliases: string[], what: string) =>
    new Command(kind)
      .aliases(aliases)
      .argument('[name]', `the ${kind}`)
      .description(`Add ${kind === 'service' ? 'Service' : 'deployment'} to the mesh`)
      .option('-r, --revision <string>', 'Control plane revision', '')
      .addHelpText(
        'after',
        `\nRestarts ${what} with the mesh sidecar: the pod template is injected as orch-inject injects it and the Deployment updated. Use it to test compatibility with the mesh instead of namespace-wide injection; if the workload does not work afterwards, re-deploy it and troubleshoot.\n${REQUIREMENTS}\nSee also 'meshctl experimental remove-from-mesh ${kind}', which does the reverse.\n\nExamples:\n  meshctl experimental add-to-mesh ${kind} productpage${kind === 'deployment' ? '-v1' : ''}\n  meshctl x add ${aliases[0] ?? kind} ratings-v1 -r canary\n`,
      )
      .action(async (name: string | undefined, options: { revision: string }, sub: Command) => {
        if (name === undefined) throw new UsageError(`expecting ${kind} name`);
        const flags = sub.optsWithGlobals<InjectGroupFlags>();
        if (flags.injectConfigFile !== '' && sub.parent?.getOptionValueSource('injectConfigMapName') === 'cli') {
          throw new UsageError('--injectConfigFile and --injectConfigMapName cannot be used together');
        }
        const meshctl = await import('../../meshctl/index.js');
        const kubeConfig = await meshctl.loadKubeClient(flags);
        const request = {
          namespace: meshctl.namespaceOf(kubeConfig, flags.namespace),
          name,
          meshNamespace: flags.meshNamespace,
          flags: { ...flags, revision: options.revision },
        };
        await (kind === 'service' ? meshctl.addServiceToMesh : meshctl.addDeploymentToMesh)(kubeConfig, request, io);
      });
  return [command('service', ['svc'], 'all pods of the Deployments a Service selects'), command('deployment', ['deploy', 'dep'], "a Deployment's pods")];
}

/** `x remove-from-mesh service` and `x remove-from-mesh deployment`: restart pods without the sidecar. */
export function newRemoveWorkloadCommands(io: CliIo): Command[] {
  const command = (kind: 'service' | 'deployment', aliases: string[]) =>
    new Command(kind)
      .aliases(aliases)
      .argument('[name]', `the ${kind}`)
      .description(`Remove ${kind === 'service' ? 'Service' : 'deployment'} from the mesh`)
      .addHelpText(
        'after',
        `\nRestarts pods with the mesh sidecar un-injected, and marks the pod template sidecar.mesh.io/inject: "false" so that namespace injection leaves them alone; a compatibility troubleshooting tool.\n\nExamples:\n  meshctl experimental remove-from-mesh ${kind} productpage${kind === 'deployment' ? '-v1' : ''}\n  meshctl x rm ${aliases[0] ?? kind} details-v1\n`,
      )
      .action(async (name: string | undefined, _options: unknown, sub: Command) => {
        if (name === undefined) throw new UsageError(`expecting ${kind} name`);
        const flags = sub.optsWithGlobals<MeshctlGlobalFlags>();
        const meshctl = await import('../../meshctl/index.js');
        const kubeConfig = await meshctl.loadKubeClient(flags);
        const request = { namespace: meshctl.namespaceOf(kubeConfig, flags.namespace), name, meshNamespace: flags.meshNamespace };
        await (kind === 'service' ? meshctl.removeServiceFromMesh : meshctl.removeDeploymentFromMesh)(kubeConfig, request, io);
      });
  return [command('service', ['svc']), command('deployment', ['deploy', 'dep'])];
}
