import { Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** Each daemon's own deadline: one unreachable daemon must not hold the others' answers. */
const PER_DAEMON_TIMEOUT_MS = 10_000;

/** `meshctl proxy-status` (`ps`): each proxy's sync state per daemon, or one proxy's config against what its daemon sent. */
export function newMeshctlProxyStatusCommand(io: CliIo): Command {
  return new Command('proxy-status')
    .alias('ps')
    .argument('[target]', '[<type>/]<name>[.<namespace>] of one proxy')
    .description(
      "Retrieves the synchronization status of each proxy in the mesh with the control plane, or compares one proxy's config with what the control plane sent it",
    )
    .option('-f, --file <string>', 'Proxy config dump JSON file (with a pod name)')
    .option('-r, --revision <string>', 'Control plane revision', '')
    .action(async (target: string | undefined, flags: { file?: string; revision: string }, command: Command) => {
      const meshctl = await import('../../meshctl/index.js');
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      if (flags.file !== undefined && target === undefined) throw new UsageError('--file can only be used when pod-name is specified', { exitCode: 64 });
      const kubeConfig = await meshctl.loadKubeClient(global);
      const query = { meshNamespace: global.meshNamespace, revision: flags.revision, timeoutMs: PER_DAEMON_TIMEOUT_MS };
      const reportFailures = (failures: ReadonlyMap<string, string>): void => {
        for (const [pod, why] of failures) io.stderr(`meshd pod ${pod} did not answer: ${why}\n`);
      };
      if (target === undefined) {
        const { answers, failures } = await meshctl.queryDaemons(kubeConfig, { ...query, path: '/debug/syncz' });
        reportFailures(failures);
        if (answers.size === 0) throw new meshctl.ProxyStatusError('no meshd instance answered');
        io.stdout(meshctl.statusTable(new Map([...answers].map(([pod, body]) => [pod, meshctl.parseSyncz(pod, body)]))));
        return;
      }
      const proxy = await meshctl.resolveProxyTarget(kubeConfig, target, meshctl.namespaceOf(kubeConfig, global.namespace), global.meshNamespace);
      // The daemon's view of a VM proxy is what is compared: the proxy's own dump comes from the VM.
      if (proxy.kind === 'vm' && flags.file === undefined)
        throw new UsageError(
          `${proxy.proxyId} is a VM's proxy, which the cluster cannot reach: give its config dump with --file (curl -s localhost:15000/config_dump on the VM)`,
          { exitCode: 64 },
        );
      const proxyDump = await (
        flags.file !== undefined ? meshctl.fileAdmin(flags.file) : meshctl.targetAdmin(kubeConfig, proxy, global.meshNamespace)
      ).configDump();
      const proxyId = meshctl.targetName(proxy);
      const { answers, failures } = await meshctl.queryDaemons(kubeConfig, { ...query, path: `/debug/config_dump?proxyID=${proxyId}` });
      const [daemon, body] = [...answers][0] ?? [];
      if (daemon === undefined || body === undefined) {
        reportFailures(failures);
        throw new meshctl.ProxyStatusError(`no meshd instance knows the proxy ${proxyId}: is it connected?`);
      }
      io.stdout(meshctl.compareConfigDumps(meshctl.parseConfigDump(body, `the config meshd pod ${daemon} sent`), proxyDump));
    });
}
