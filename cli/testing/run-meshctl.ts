/**
 * Test support: meshctl run in the test's own process, through the same program tree and exit
 * codes as the built binary (`runProgram`), with its settings from `env` rather than the
 * process's. Output written through the program's io is captured; one smoke test per suite still
 * spawns the built program for what only a process shows (its stderr logging, its exit).
 */
import { loadSettings } from '../../runtime/index.js';
import type { BinResult } from '../../testing/run-bin.js';
import { buildMeshctl } from '../meshctl/meshctl-program.js';
import { runProgram } from '../run-cli.js';

export async function runMeshctlInProcess(args: readonly string[], env: Record<string, string> = {}): Promise<BinResult> {
  // The commands load their packages lazily, some two at once; under jest's module loader two
  // concurrent first imports of one graph fail ("request for … is not in cache"): load them first.
  await import('../../meshctl/index.js');
  let stdout = '';
  let stderr = '';
  const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
  const code = await runProgram(
    buildMeshctl(io, () => loadSettings('meshctl', env)),
    args,
    io,
  );
  return { code, stdout, stderr };
}
