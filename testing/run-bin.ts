import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { processEnvironment } from '../runtime/index.js';

/** The project root, for tests that run the built programs. */
export const PROJECT_ROOT = fileURLToPath(new URL('..', import.meta.url));

export type ProgramName = 'pilot-discovery' | 'pilot-agent' | 'meshctl';

export interface BinResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built program (`npm run build` first) to completion. */
export function runBin(
  program: ProgramName,
  args: readonly string[],
  options: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<BinResult> {
  const child = startBin(program, args, options.env, options.cwd);
  return collect(child, options.timeoutMs ?? 20_000);
}

/** Starts a built program in the background; the caller stops it. */
export function startBin(program: ProgramName, args: readonly string[], env: Record<string, string> = {}, cwd: string = PROJECT_ROOT): ChildProcess {
  return spawn(process.execPath, [`${PROJECT_ROOT}bin/${program}.js`, ...args], {
    cwd,
    env: { ...processEnvironment(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export function collect(child: ChildProcess, timeoutMs: number): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`program did not exit within ${timeoutMs}ms; stdout: ${stdout}; stderr: ${stderr}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
