import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { MeshError, errorMessage, processEnvironment } from '../runtime/index.js';
import { chartReleasesOf, installedStateName, type ChartRelease, type ComponentName } from './chart-values.js';
import type { MeshOperator } from './mesh-operator.js';

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
 * The charts are rendered at the same time (each `helm template` its own process, mostly waiting
 * to start and read its chart): an installation's three or four take about the time of the
 * slowest, the base chart with its CRDs.
 */
export async function renderReleases(releases: readonly ChartRelease[], options: RenderOptions): Promise<RenderedComponent[]> {
  return Promise.all(
    releases.map(async (release) => ({
      component: release.component,
      release: release.release,
      manifest: await renderChart(
        { chart: release.chart, release: release.release, namespace: release.namespace, values: release.values, includeCrds: release.chart === 'base' },
        options,
      ),
    })),
  );
}

/** One chart of `<manifests>/charts` rendered with `helm template` and these values. */
export async function renderChart(
  chart: {
    readonly chart: string;
    readonly release: string;
    readonly namespace: string;
    readonly values: Record<string, unknown>;
    readonly includeCrds: boolean;
  },
  options: RenderOptions,
): Promise<string> {
  const workDir = mkdtempSync(join(tmpdir(), 'meshctl-render-'));
  try {
    const valuesFile = join(workDir, 'values.yaml');
    writeFileSync(valuesFile, stringify(chart.values));
    const args = [
      'template',
      chart.release,
      join(options.manifestsDir, 'charts', chart.chart),
      '--namespace',
      chart.namespace,
      '-f',
      valuesFile,
      ...(chart.includeCrds ? ['--include-crds'] : []),
    ];
    return await helmTemplate(options.helm ?? 'helm', args);
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

async function helmTemplate(helm: string, args: readonly string[]): Promise<string> {
  try {
    // The environment handed on explicitly: helm is looked up on its PATH, the caller's own.
    return (await run(helm, [...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env: processEnvironment() })).stdout;
  } catch (error) {
    const failed = error as { code?: string | number; stderr?: string };
    if (failed.code === 'ENOENT') {
      throw new MeshError(
        'render-failed',
        'meshctl renders the charts with the helm program, which was not found: install helm 3.8 or later (https://helm.sh/docs/intro/install/) and put it on the PATH',
        { cause: error },
      );
    }
    throw new MeshError('render-failed', `helm ${args.slice(0, 3).join(' ')}: ${(failed.stderr ?? errorMessage(error)).trim()}`, { cause: error });
  }
}

/** The manifests of a built installation: its releases (owned by its record's name), `components` only when given. */
export async function renderInstallation(
  config: MeshOperator,
  options: RenderOptions & { readonly components?: readonly string[] },
): Promise<RenderedComponent[]> {
  const only = options.components ?? [];
  const releases = chartReleasesOf(config.spec ?? {}, config.metadata?.name ?? installedStateName(config.spec?.revision)).filter(
    (release) => only.length === 0 || only.includes(release.component),
  );
  return renderReleases(releases, { manifestsDir: options.manifestsDir, ...(options.helm ? { helm: options.helm } : {}) });
}
