import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../runtime/index.js';
import { COMPONENTS, EXIT_USAGE, buildOperatorConfig, renderInstallation, type OperatorConfigInputs, type RenderedComponent } from '../../install/index.js';

export interface ManifestGenerateOptions extends OperatorConfigInputs {
  /** `--component`: only these (the reference's names: Base, Pilot, IngressGateways, EgressGateways). */
  readonly components: readonly string[];
  /** The helm program. */
  readonly helm?: string;
}

/** The manifests of an installation, component by component in apply order (CRDs first). */
export async function generateManifests(options: ManifestGenerateOptions): Promise<RenderedComponent[]> {
  for (const component of options.components) {
    if (!(COMPONENTS as readonly string[]).includes(component))
      throw new UsageError(`--component ${component}: unknown component; have ${COMPONENTS.join(', ')}`, { exitCode: EXIT_USAGE });
  }
  return renderInstallation(buildOperatorConfig(options), options);
}

/** Standard output: every component's manifest in order. */
export function manifestText(rendered: readonly RenderedComponent[]): string {
  return rendered.map((component) => component.manifest).join('');
}

/** `-o <dir>`: one folder per component, one file per release; returns the files' paths (with `dryRun`, only those). */
export function writeManifestDir(dir: string, rendered: readonly RenderedComponent[], options: { readonly dryRun?: boolean } = {}): string[] {
  return rendered.map((component) => {
    const folder = join(dir, component.component);
    const file = join(folder, `${component.release}.yaml`);
    if (!options.dryRun) {
      mkdirSync(folder, { recursive: true });
      writeFileSync(file, component.manifest);
    }
    return file;
  });
}
