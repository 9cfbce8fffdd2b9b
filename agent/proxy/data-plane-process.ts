import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../../runtime/index.js';
import { errorMessage } from '../../runtime/index.js';

/** How the data plane process is started: Envoy, or the embedded data plane's program. */
export interface DataPlaneCommand {
  readonly command: string;
  readonly args: readonly string[];
}

export interface DataPlaneProcessOptions {
  readonly launch: DataPlaneCommand;
  /** The data plane's admin API (`http://<address>:15000`): readiness, drain and quit go there. */
  readonly adminUrl: string;
  /** A sidecar drains its inbound listeners only (its app may still call out while it stops); a gateway drains all. */
  readonly inboundOnlyDrain: boolean;
  readonly log: Logger;
  /** The first restart waits this long; each further one twice as long, up to `maxRestartDelayMs`. */
  readonly initialRestartDelayMs?: number;
  readonly maxRestartDelayMs?: number;
  /** A process that stayed up this long starts the backoff over. */
  readonly stableAfterMs?: number;
  /** After SIGTERM, the process gets this long before SIGKILL. */
  readonly killAfterMs?: number;
}

export interface DataPlaneProcess {
  start(): void;
  /** Why the data plane is not ready, or undefined: it is live and took its first listeners and clusters. */
  notReady(): Promise<string | undefined>;
  /** Drains the listeners (gracefully, inbound ones only for a sidecar, as Envoy's `/drain_listeners?inboundonly&graceful`) and waits `graceMs`. */
  drain(graceMs: number, signal?: AbortSignal): Promise<void>;
  /** Stops supervising and ends the process. */
  stop(): Promise<void>;
  /** The running process id, if any (for tests and logs). */
  pid(): number | undefined;
  /** How many times the process was restarted after exiting on its own. */
  restarts(): number;
}

const READY_STATS = ['cluster_manager.cds.update_success', 'listener_manager.lds.update_success'] as const;

function statValues(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) values.set(line.slice(0, colon).trim(), Number(line.slice(colon + 1)));
  }
  return values;
}

/**
 * Supervises the data plane as a child process, as the agent does with Envoy: starts it,
 * restarts it with exponential backoff when it exits on its own, reads its readiness from the
 * admin API (live, and the first CDS and LDS updates accepted: a rejected initial config keeps it
 * unready), drains it through the admin API on shutdown, then ends it with SIGTERM (SIGKILL if
 * it lingers).
 */
export function newDataPlaneProcess(options: DataPlaneProcessOptions): DataPlaneProcess {
  const { log, launch } = options;
  const initialDelay = options.initialRestartDelayMs ?? 200;
  const maxDelay = options.maxRestartDelayMs ?? 10_000;
  const stableAfter = options.stableAfterMs ?? 30_000;
  let child: ChildProcess | undefined;
  let stopped = false;
  let restartDelay = initialDelay;
  let restartTimer: NodeJS.Timeout | undefined;
  let restartCount = 0;

  const run = (): void => {
    if (stopped) return;
    const startedAt = Date.now();
    // Its own process group: a Ctrl-C meant for the agent must not end the data plane under it (the
    // agent drains and ends it). stdin stays an open pipe: the embedded data plane exits when it
    // closes, so it never outlives the agent.
    const spawned = spawn(launch.command, [...launch.args], { stdio: ['pipe', 'inherit', 'inherit'], detached: true });
    child = spawned;
    spawned.once('error', (error) => log.error({ command: launch.command, error: error.message }, 'data plane could not start'));
    spawned.once('exit', (code, signal) => {
      if (child === spawned) child = undefined;
      if (stopped) return;
      if (Date.now() - startedAt >= stableAfter) restartDelay = initialDelay;
      log.error({ command: launch.command, code, signal, restartInMs: restartDelay }, 'data plane exited; restarting');
      restartTimer = setTimeout(() => {
        restartCount += 1;
        run();
      }, restartDelay);
      restartDelay = Math.min(restartDelay * 2, maxDelay);
    });
    log.info({ command: launch.command, pid: spawned.pid }, 'data plane started');
  };

  const admin = async (method: 'GET' | 'POST', path: string): Promise<Response> =>
    fetch(`${options.adminUrl}${path}`, { method, signal: AbortSignal.timeout(2_000) });

  return {
    start: run,
    async notReady() {
      if (!child) return 'data plane not running';
      try {
        const live = await admin('GET', '/ready');
        if (live.status !== 200) return `data plane not live: ${(await live.text()).trim()}`;
        const stats = statValues(
          await (
            await admin('GET', `/stats?usedonly&filter=${encodeURIComponent('^(cluster_manager\\.cds|listener_manager\\.lds)\\.update_success$')}`)
          ).text(),
        );
        const missing = READY_STATS.filter((name) => !((stats.get(name) ?? 0) > 0));
        return missing.length === 0 ? undefined : `config not received from the control plane yet: ${missing.join(', ')} is 0`;
      } catch (error) {
        return `data plane admin unreachable: ${errorMessage(error)}`;
      }
    },
    async drain(graceMs, signal) {
      if (!child) return;
      try {
        await admin('POST', options.inboundOnlyDrain ? '/drain_listeners?inboundonly&graceful' : '/drain_listeners?graceful');
      } catch (error) {
        log.warn({ error: errorMessage(error) }, 'data plane drain request failed');
      }
      if (graceMs <= 0 || signal?.aborted) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        signal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
    },
    async stop() {
      stopped = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGTERM');
      const killer = setTimeout(() => running.kill('SIGKILL'), options.killAfterMs ?? 5_000);
      await exited;
      clearTimeout(killer);
    },
    pid: () => child?.pid,
    restarts: () => restartCount,
  };
}
