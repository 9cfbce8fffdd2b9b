import { Command, Option } from 'commander';
import { ExitStatus } from '../../runtime/index.js';
import { describeDuration, durationFlag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/** The exit status of `x mtls readiness` when STRICT would refuse some caller. */
const NOT_READY = 3;
const ONE_HOUR_MS = 3_600_000;

const HELP = `
Reads the traffic the proxies of a namespace's meshed workloads recorded (their
/recent_requests) and lists, per workload port, the callers that spoke plain text within
--since: the callers a STRICT PeerAuthentication would refuse. A namespace is READY when there is
none.

Exit status: 0 READY, 3 NOT READY.

Examples:
  meshctl x mtls readiness -n foo
  meshctl x mtls readiness httpbin-5446f4d9b4-abcde -n foo --since 10m -o json
`;

/** `meshctl x mtls readiness [pod]`: would STRICT mutual TLS break anyone, from recorded traffic. */
export function newMeshctlMtlsCommand(io: CliIo): Command {
  const mtls = new Command('mtls').description('Inspect mutual TLS between workloads');
  mtls.addCommand(
    new Command('readiness')
      .argument('[pod]', 'One meshed pod of the namespace (default: all of them)')
      .description('Show the plain-text callers a STRICT PeerAuthentication would refuse, and whether the namespace is ready for it')
      .addHelpText('after', HELP)
      .addOption(
        new Option('--since <duration>', 'Only traffic seen this recently counts').argParser(durationFlag).default(ONE_HOUR_MS, describeDuration(ONE_HOUR_MS)),
      )
      .addOption(new Option('-o, --output <string>', 'Output format').choices(['text', 'json']).default('text'))
      .action(async (pod: string | undefined, flags: { since: number; output: 'text' | 'json' }, command: Command) => {
        const meshctl = await import('../../meshctl/index.js');
        const global = command.optsWithGlobals<MeshctlGlobalFlags>();
        const kubeConfig = await meshctl.loadKubeClient(global);
        const report = await meshctl.mtlsReadiness({
          kubeConfig,
          namespace: meshctl.namespaceOf(kubeConfig, global.namespace),
          ...(pod !== undefined ? { pod } : {}),
          sinceMs: flags.since,
        });
        io.stdout(flags.output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : meshctl.renderReadiness(report));
        if (report.namespaces.some((namespace) => !namespace.ready)) throw new ExitStatus(NOT_READY);
      }),
  );
  return mtls;
}
