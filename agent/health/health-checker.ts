import { errorMessage, type Clock, type Logger, type TimerHandle } from '../../runtime/index.js';
import { runProbeAction, type ProbeOutcome } from './probe-action.js';
import type { ReadinessProbe } from './readiness-probe.js';

export interface HealthCheckerOptions {
  readonly probe: ReadinessProbe;
  /**
   * Asked before the app on each probe, as the reference asks Envoy first: why the proxy is not
   * ready, or undefined when it is. A reason counts as a failed probe.
   */
  readonly gate?: () => string | undefined | Promise<string | undefined>;
  /** Each change of the workload's health: the first verdict, then every flip. */
  readonly onChange: (health: ProbeOutcome) => void;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Probes the app on a period and tells when its health changes. */
export interface HealthChecker {
  start(): void;
  stop(): void;
  /** The health last told; undefined until a threshold is first reached. */
  current(): ProbeOutcome | undefined;
}

/**
 * The reference agent's application health check: after the initial delay, a probe at once and
 * then one per period (never two at a time). `successThreshold` consecutive successes make the
 * workload healthy, `failureThreshold` consecutive failures unhealthy; only changes are told
 * (heartbeats are not), and the first verdict either way is one.
 */
export function newHealthChecker(options: HealthCheckerOptions): HealthChecker {
  const { probe, clock, log } = options;
  let timer: TimerHandle | undefined;
  let running = false;
  let current: ProbeOutcome | undefined;
  let successes = 0;
  let failures = 0;

  const probeOnce = async (): Promise<ProbeOutcome> => {
    try {
      const reason = await options.gate?.();
      if (reason !== undefined) return { healthy: false, message: reason };
      return await runProbeAction(probe.action, probe.timeoutMs);
    } catch (error) {
      return { healthy: false, message: errorMessage(error) };
    }
  };

  const record = (outcome: ProbeOutcome): void => {
    if (outcome.healthy) {
      successes += 1;
      failures = 0;
      if (successes >= probe.successThreshold && current?.healthy !== true) {
        successes = 0;
        tell(outcome);
      }
      return;
    }
    failures += 1;
    successes = 0;
    if (failures >= probe.failureThreshold && current?.healthy !== false) {
      failures = 0;
      tell(outcome);
    }
  };

  const tell = (outcome: ProbeOutcome): void => {
    current = outcome;
    if (outcome.healthy) log.info('success threshold hit, marking as healthy');
    else log.info({ error: outcome.message }, 'failure threshold hit, marking as unhealthy');
    options.onChange(outcome);
  };

  const check = async (): Promise<void> => {
    if (!running) return;
    const started = clock.now();
    const outcome = await probeOnce();
    if (!running) return;
    record(outcome);
    timer = clock.setTimer(() => void check(), Math.max(0, probe.periodMs - (clock.now() - started)));
  };

  return {
    start() {
      if (running) return;
      running = true;
      log.info({ probe: probe.action.kind, initialDelayMs: probe.initialDelayMs }, 'starting the application health check');
      timer = clock.setTimer(() => void check(), probe.initialDelayMs);
    },
    stop() {
      running = false;
      timer?.cancel();
      timer = undefined;
    },
    current: () => current,
  };
}
