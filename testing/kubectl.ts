/** The real kubectl, run as a user runs it against a kubeconfig; never throws on a failed command. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { toolPath } from './tools.js';

const run = promisify(execFile);

export interface KubectlResult {
  readonly stdout: string;
  readonly stderr: string;
  /** The exit code: 0, 1 for a refused request. */
  readonly code: number;
}

export async function kubectl(target: { kubeconfig: string; home: string }, args: readonly string[]): Promise<KubectlResult> {
  try {
    const { stdout, stderr } = await run(await toolPath('kubectl'), ['--kubeconfig', target.kubeconfig, ...args], {
      env: { HOME: target.home },
      timeout: 30_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? '', code: typeof failed.code === 'number' ? failed.code : -1 };
  }
}
