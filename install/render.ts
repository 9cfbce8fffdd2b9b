import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { MeshError, errorMessage } from '../controllers/runtime/index.js';
import type { ChartRelease, ComponentName } from './chart-values.js';

const run = promisify(execFile);

export interface RenderedComponent {
  readonly component: ComponentName;
  readonly release: string;
  /** The release's manifest as `helm template` prints it (CRDs included for the base chart). */
  readonly manifest: string;
}

export interface RenderOptions {
  /** `--manifests`/`-d`: holds `charts/`. */
  readonly manifestsDir: string;
  /** The helm program; default `helm` on the PATH. */
  readonly helm?: string;
}

/**
 * Renders each release through the `helm` binary (`helm template` with the merged values), so
 * `meshctl` and `helm install` make the same objects; in the order given, which is the apply order.
 */
export async function renderReleases(releases: readonly ChartRelease[], options: RenderOptions): Promise<RenderedComponent[]> {
  const workDir = mkdtempSync(join(tmpdir(), 'meshctl-render-'));
  try {
    const rendered: RenderedComponent[] = [];
    for (const release of releases) {
      const valuesFile = join(workDir, `${release.release}.yaml`);
      writeFileSync(valuesFile, stringify(release.values));
      const args = ['template', release.release, join(options.manifestsDir, 'charts', release.chart), '--namespace', release.namespace, '-f', valuesFile, ...(release.chart === 'base' ? ['--include-crds'] : [])];
      rendered.push({ component: release.component, release: release.release, manifest: await helmTemplate(options.helm ?? 'helm', args) });
    }
    return rendered;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function helmTemplate(helm: string, args: readonly string[]): Promise<string> {
  try {
    return (await run(helm, [...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (error) {
    const failed = error as { code?: string | number; stderr?: string };
    if (failed.code === 'ENOENT') {
      throw new MeshError('render-failed', 'meshctl renders the charts with the helm program, which was not found: install helm 3.8 or later (https://helm.sh/docs/intro/install/) and put it on the PATH', { cause: error });
    }
    throw new MeshError('render-failed', `helm ${args.slice(0, 3).join(' ')}: ${(failed.stderr ?? errorMessage(error)).trim()}`, { cause: error });
  }
}
