import { Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl x check-inject [<pod>] [-l labels]`: which injection webhook would inject the pod, or why none would. */
export function newMeshctlCheckInjectCommand(io: CliIo): Command {
  return new Command('check-inject')
    .argument('[pod]', '[<type>/]<name>[.<namespace>]')
    .description('Check the injection status or inject-ability of a given resource, explaining why it is (or will be) injected or not')
    .option('-l, --labels <string>', 'Check the namespace and the labels of a pod to be (key=value,…) instead of an existing pod')
    .action(async (target: string | undefined, flags: { labels?: string }, command: Command) => {
      if ((target === undefined) === (flags.labels === undefined)) throw new UsageError('check-inject requires a pod or --labels', { exitCode: 64 });
      const meshctl = await import('../../meshctl/index.js');
      const { AdmissionregistrationV1Api, CoreV1Api } = await import('@kubernetes/client-node');
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      const kubeConfig = await meshctl.loadKubeClient(global);
      let namespace = meshctl.namespaceOf(kubeConfig, global.namespace);
      let podLabels: Record<string, string>;
      if (target !== undefined) {
        const pod = await meshctl.resolvePodTarget(kubeConfig, target, namespace);
        namespace = pod.namespace;
        podLabels = pod.pod.metadata?.labels ?? {};
      } else {
        podLabels = Object.fromEntries(
          (flags.labels ?? '')
            .split(',')
            .filter((pair) => pair !== '')
            .map((pair) => {
              const at = pair.indexOf('=');
              if (at <= 0) throw new UsageError(`--labels ${flags.labels ?? ''}: want key=value pairs, comma separated`, { exitCode: 64 });
              return [pair.slice(0, at), pair.slice(at + 1)];
            }),
        );
      }
      const namespaceLabels = (await kubeConfig.makeApiClient(CoreV1Api).readNamespace({ name: namespace })).metadata?.labels ?? {};
      const webhooks = (await kubeConfig.makeApiClient(AdmissionregistrationV1Api).listMutatingWebhookConfiguration()).items;
      io.stdout(meshctl.renderCheckInject(meshctl.checkInjection(webhooks, namespaceLabels, podLabels)));
    });
}
