import { runnableOf, type Clock, type Logger, type Runnable } from '../../runtime/index.js';
import type { AgentReports } from '../xds-proxy/agent-reports.js';
import { newHealthChecker, type HealthChecker, type HealthCheckerOptions } from './health-checker.js';
import { HEALTH_INFORMATION_TYPE } from '../../xds/envoy/index.js';
import type { ProbeOutcome } from './probe-action.js';
import type { ReadinessProbe } from './readiness-probe.js';

/** gRPC's Internal: the code of an unhealthy report's `error_detail`. */
const INTERNAL = 13;

export interface WorkloadHealthOptions {
  readonly probe: ReadinessProbe;
  readonly gate?: HealthCheckerOptions['gate'];
  /** Where the reports go: the proxy's xDS streams. */
  readonly reports: AgentReports;
  readonly clock: Clock;
  /** The `healthcheck` scope. */
  readonly log: Logger;
}

export interface WorkloadHealth {
  readonly runnable: Runnable;
  readonly checker: HealthChecker;
  /** Why the agent is not ready on account of the app (the status port's readiness), or undefined. */
  notReady(): string | undefined;
}

/** The report of one verdict, as the reference's agent words it on the xDS stream. */
export function healthReport(health: ProbeOutcome): { typeUrl: string; errorDetail?: { code: number; message: string } } {
  return health.healthy ? { typeUrl: HEALTH_INFORMATION_TYPE } : { typeUrl: HEALTH_INFORMATION_TYPE, errorDetail: { code: INTERNAL, message: health.message } };
}

/**
 * A proxy config's `readinessProbe` at work (a VM's, from its WorkloadGroup): the app is probed,
 * each change of its health is reported to the daemon on the proxy's stream, and the agent is
 * ready only while the app is healthy.
 */
export function newWorkloadHealth(options: WorkloadHealthOptions): WorkloadHealth {
  const checker = newHealthChecker({
    probe: options.probe,
    ...(options.gate ? { gate: options.gate } : {}),
    onChange: (health) => options.reports.send(healthReport(health)),
    clock: options.clock,
    log: options.log,
  });
  return {
    checker,
    runnable: runnableOf('workload-health-check', () => {
      checker.start();
      return () => checker.stop();
    }),
    notReady() {
      const health = checker.current();
      if (health === undefined) return 'the application health is not known yet';
      return health.healthy ? undefined : `the application is not healthy: ${health.message}`;
    },
  };
}
