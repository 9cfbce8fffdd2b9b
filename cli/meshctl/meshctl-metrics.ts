import { Command } from 'commander';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

/**
 * `meshctl x metrics` (`m`): requests per second, error (5xx) rate and p50/p90/p99 latency of
 * workloads over one minute, server side, from the metrics add-on (pods labelled app=prometheus
 * in the mesh namespace, reached by a port-forward to 9090).
 */
export function newMeshctlMetricsCommand(io: CliIo): Command {
  return new Command('metrics')
    .alias('m')
    .argument('<workload...>', '<name>[.<namespace>] of each workload; without a namespace, the workload in any namespace')
    .description('Prints the metrics for the specified workload(s) when running in Kubernetes.')
    .addHelpText(
      'after',
      '\nThis command finds a Prometheus pod running in the specified mesh namespace (-i). It then executes a series of queries\nper requested workload to find the following top-level workload metrics: total requests per second, error rate, and\nrequest latency at p50, p90, and p99 percentiles. The query results are printed to the console, organized by workload name.\n\nAll metrics returned are from server-side reports. This means that latencies and error rates are from the perspective\nof the service itself and not of an individual client (or aggregate set of clients). Rates and latencies are calculated\nover a time interval of 1 minute.\n\nExamples:\n  # Retrieve workload metrics for productpage-v1 workload\n  meshctl experimental metrics productpage-v1\n\n  # Retrieve workload metrics for various services with the experimental alias\n  meshctl x m productpage-v1.foo reviews-v1.bar ratings-v1.baz\n',
    )
    .action(async (workloads: string[], _options: unknown, command: Command) => {
      const meshctl = await import('../../meshctl/index.js');
      const targets = workloads.map((label) => ({ label, target: meshctl.parseWorkloadTarget(label) }));
      const flags = command.optsWithGlobals<MeshctlGlobalFlags>();
      const rows = await meshctl.gatherWorkloadMetrics(await meshctl.loadKubeClient(flags), { meshNamespace: flags.meshNamespace, workloads: targets });
      io.stdout(meshctl.renderWorkloadMetrics(rows));
    });
}
