import { Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { newMeshctlAuthzExplainCommand } from './meshctl-authz-explain.js';
import { newMeshctlAuthzPreviewCommand } from './meshctl-authz-preview.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl x describe pod|svc` (`des`): how the mesh's config applies to a pod, from its proxy's point of view. */
export function newMeshctlDescribeCommand(io: CliIo): Command {
  const describe = new Command('describe').alias('des').description('Describe resource and related mesh configuration');
  const load = async (command: Command) => {
    const meshctl = await import('../../meshctl/index.js');
    const global = command.optsWithGlobals<MeshctlGlobalFlags>();
    const kubeConfig = await meshctl.loadKubeClient(global);
    return { meshctl, kubeConfig, global, namespace: meshctl.namespaceOf(kubeConfig, global.namespace) };
  };
  describe.addCommand(
    new Command('pod')
      .alias('po')
      .argument('<pod>', '<name>[.<namespace>] (a VM: workloadentry/<name> or its proxy ID)')
      .description('Describe pods and their mesh configuration [kube-only]')
      .option('--ignoreUnmeshed', 'Suppress warnings for unmeshed pods', false)
      .action(async (target: string, flags: { ignoreUnmeshed: boolean }, command: Command) => {
        const { meshctl, kubeConfig, global, namespace } = await load(command);
        const facts = await meshctl.gatherPodTarget(kubeConfig, target, namespace, global.meshNamespace);
        io.stdout(meshctl.describePod(facts, flags));
      }),
  );
  describe.addCommand(
    new Command('service')
      .aliases(['svc'])
      .argument('<svc>', '<name>[.<namespace>]')
      .description('Describe services and their mesh configuration [kube-only]')
      .option('--ignoreUnmeshed', 'Suppress warnings for unmeshed pods', false)
      .action(async (target: string, flags: { ignoreUnmeshed: boolean }, command: Command) => {
        const { meshctl, kubeConfig, global, namespace } = await load(command);
        const found = await meshctl.gatherServiceTarget(kubeConfig, target, namespace, global.meshNamespace);
        io.stdout('unmeshed' in found ? found.unmeshed : meshctl.describePod(found.facts, flags));
      }),
  );
  return describe;
}

/** `meshctl x authz check <pod>` (or `-f`): the AuthorizationPolicies a proxy enforces. */
export function newMeshctlAuthzCommand(io: CliIo, readStdin: () => Promise<string>): Command {
  const authz = new Command('authz').description('Inspect mesh AuthorizationPolicy');
  authz.addCommand(
    new Command('check')
      .argument('[pod]', '<name>[.<namespace>]')
      .description('Check AuthorizationPolicy applied in the pod')
      .option('-f, --file <string>', 'The json file with the proxy config dump that will be checked')
      .action(async (target: string | undefined, flags: { file?: string }, command: Command) => {
        if ((target === undefined) === (flags.file === undefined)) throw new UsageError('check requires pod name or --file parameter', { exitCode: 64 });
        const meshctl = await import('../../meshctl/index.js');
        let admin;
        if (flags.file !== undefined) admin = meshctl.fileAdmin(flags.file);
        else {
          const global = command.optsWithGlobals<MeshctlGlobalFlags>();
          const kubeConfig = await meshctl.loadKubeClient(global);
          const proxy = await meshctl.resolveProxyTarget(kubeConfig, target ?? '', meshctl.namespaceOf(kubeConfig, global.namespace), global.meshNamespace);
          admin = meshctl.targetAdmin(kubeConfig, proxy, global.meshNamespace);
        }
        io.stdout(meshctl.authzCheck(await admin.configDump()));
      }),
  );
  authz.addCommand(newMeshctlAuthzExplainCommand(io));
  authz.addCommand(newMeshctlAuthzPreviewCommand(io, readStdin));
  return authz;
}
