/** The real helm, run the way a user runs it: its own HOME and caches in `workDir`, a kubeconfig when a cluster is needed. */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './run-bin.js';
import { toolPath } from './tools.js';

const run = promisify(execFile);

/** The charts of the project. */
export const CHARTS_DIR = join(PROJECT_ROOT, 'deploy', 'charts');

export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs helm asynchronously (an API server double in this process must keep answering); never throws on a failed command. */
export async function helm(args: readonly string[], options: { workDir: string; kubeconfig?: string; timeoutMs?: number }): Promise<HelmResult> {
  const env = {
    HOME: options.workDir,
    HELM_CACHE_HOME: join(options.workDir, '.helm-cache'),
    HELM_CONFIG_HOME: join(options.workDir, '.helm-config'),
    HELM_DATA_HOME: join(options.workDir, '.helm-data'),
    ...(options.kubeconfig ? { KUBECONFIG: options.kubeconfig } : {}),
  };
  try {
    const { stdout, stderr } = await run(await toolPath('helm'), [...args], {
      env,
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 60_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/**
 * A rendered manifest with each CustomResourceDefinition reduced to a `# CustomResourceDefinition
 * <name>` line, for goldens: the CRDs' bodies are pinned once, by `crds/generated/crds.yaml`.
 */
export function withCrdsNamedOnly(manifest: string): string {
  return manifest
    .split(/^---\n/m)
    .map((doc) => (/^kind: CustomResourceDefinition$/m.test(doc) ? `# CustomResourceDefinition ${/^ {2}name: (.*)$/m.exec(doc)?.[1] ?? ''}\n` : doc))
    .join('---\n');
}
