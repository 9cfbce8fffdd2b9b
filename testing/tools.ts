/** The real helm and kubectl binaries the tests drive, installed into .tools/bin by scripts/get-helm-kubectl.sh. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './run-bin.js';
import { processEnvironment, setProcessEnvironmentVariable } from '../runtime/index.js';

const run = promisify(execFile);

export const TOOLS_BIN = join(PROJECT_ROOT, '.tools', 'bin');

/**
 * The path of `helm` or `kubectl`. `npm test` installs them first; a test run straight with jest
 * installs them here, by the project's own script.
 */
export async function toolPath(tool: 'helm' | 'kubectl'): Promise<string> {
  const path = join(TOOLS_BIN, tool);
  if (!existsSync(path)) await run('bash', [join(PROJECT_ROOT, 'scripts', 'get-helm-kubectl.sh'), TOOLS_BIN], { timeout: 180_000 });
  return path;
}

/**
 * Puts `.tools/bin` first on this process's PATH, where a program run in process (meshctl's
 * install family) looks for helm; returns what restores it. Installs the tools first if needed.
 */
export async function toolsFirstOnPath(): Promise<() => void> {
  await toolPath('helm');
  const before = processEnvironment()['PATH'] ?? '';
  setProcessEnvironmentVariable('PATH', `${TOOLS_BIN}:${before}`);
  return () => setProcessEnvironmentVariable('PATH', before);
}
