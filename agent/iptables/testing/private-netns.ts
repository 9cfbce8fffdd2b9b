import { spawn, spawnSync } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { once } from 'node:events';
import { waitFor } from '../../../testing/wait-for.js';
import { newProcessRunner, type CommandRunner } from '../command-runner.js';

/**
 * Test support: a private network namespace to load rules into for real, leaving the machine's
 * own tables alone. Needs root, `unshare` and `nsenter` (util-linux) and Debian's `iptables`.
 */
export interface PrivateNetns {
  /** Runs a command inside the namespace. */
  readonly run: CommandRunner;
  close(): Promise<void>;
}

/** Why rules cannot be loaded here, or undefined when they can. */
export function privateNetnsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not running as root';
  if (spawnSync('unshare', ['-n', 'true']).status !== 0) return '`unshare -n` is not available or not permitted';
  return undefined;
}

/** Whether Debian's iptables is installed (CI installs it with `apt-get install -y iptables`). */
export function iptablesInstalled(): boolean {
  return ['iptables-restore', 'ip6tables-restore', 'iptables-save'].every((program) => spawnSync(program, ['--version']).status === 0);
}

export async function newPrivateNetns(): Promise<PrivateNetns> {
  const holder = spawn('unshare', ['-n', 'sleep', '600'], { stdio: 'ignore' });
  const pid = holder.pid;
  if (pid === undefined) throw new Error('cannot start unshare');
  const ownNetns = readlinkSync('/proc/self/ns/net');
  await waitFor(() => readlinkSync(`/proc/${pid}/ns/net`) !== ownNetns, { timeoutMs: 5000, description: 'the private network namespace' });
  const runner = newProcessRunner();
  const run: CommandRunner = (argv, stdin) => runner(['nsenter', '-t', String(pid), '-n', ...argv], stdin);
  const lo = await run(['ip', 'link', 'set', 'lo', 'up']);
  if (lo.code !== 0) throw new Error(`cannot bring lo up: ${lo.stderr}`);
  return {
    run,
    close: async () => {
      if (holder.exitCode === null && holder.signalCode === null) {
        const exited = once(holder, 'exit');
        holder.kill('SIGKILL');
        await exited;
      }
    },
  };
}
