import { Command, Option } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { durationFlag, floatFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** `meshctl x wait`: until a config generation has reached (or, `--for delete`, left) the proxies. */
export function newMeshctlWaitCommand(io: CliIo): Command {
  return new Command('wait')
    .argument('<type>', 'the config kind (virtualservice, vs, DestinationRule, …)')
    .argument('<name>', '<name>[.<namespace>]')
    .description("Wait for a mesh resource to be distributed to the proxies, as the daemon's config distribution tracking reports it")
    .addOption(new Option('--for <string>', "Wait condition, must be 'distribution' or 'delete'").default('distribution'))
    .option('--generation <string>', 'Wait for a specific generation of config to become current, rather than using whatever is latest in the cluster')
    .option('-r, --revision <string>', 'Control plane revision', '')
    .addOption(new Option('--threshold <float32>', 'The ratio of distribution required for success').argParser(floatFlag).default(1))
    .addOption(new Option('--timeout <duration>', 'The duration to wait before failing').argParser(durationFlag).default(30_000, '30s'))
    .action(
      async (
        type: string,
        name: string,
        flags: { for: string; generation?: string; revision: string; threshold: number; timeout: number },
        command: Command,
      ) => {
        if (flags.for !== 'distribution' && flags.for !== 'delete')
          throw new UsageError(`--for ${flags.for}: must be 'distribution' or 'delete'`, { exitCode: 64 });
        if (flags.threshold <= 0 || flags.threshold > 1)
          throw new UsageError(`--threshold ${flags.threshold}: must be above 0 and at most 1`, { exitCode: 64 });
        const meshctl = await import('../../meshctl/index.js');
        const global = command.optsWithGlobals<MeshctlGlobalFlags>();
        const kubeConfig = await meshctl.loadKubeClient(global);
        io.stdout(
          await meshctl.waitForDistribution(kubeConfig, type, name, meshctl.namespaceOf(kubeConfig, global.namespace), {
            for: flags.for,
            ...(flags.generation !== undefined ? { generation: flags.generation } : {}),
            threshold: flags.threshold,
            timeoutMs: flags.timeout,
            revision: flags.revision,
            meshNamespace: global.meshNamespace,
          }),
        );
      },
    );
}
