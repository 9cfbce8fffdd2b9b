import { createTwoFilesPatch } from 'diff';
import { MeshError } from '../../runtime/index.js';
import type { MeshOperator } from '../../install/index.js';
import { renderProfileDump } from './profile-commands.js';

function parseVersion(text: string): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(text.trim());
  return match ? [Number(match[1]), Number(match[2]), Number(match[3] ?? 0)] : undefined;
}

/**
 * The reference's upgrade rule: no downgrade, and no jump of more than one minor version (nor a
 * major one), unless `--force`. Unparseable versions (a development build) are let through.
 */
export function checkUpgradeEligible(installed: string, target: string, force: boolean): void {
  const from = parseVersion(installed);
  const to = parseVersion(target);
  if (force || !from || !to) return;
  const order = (v: [number, number, number]): number => v[0] * 1e6 + v[1] * 1e3 + v[2];
  if (order(to) < order(from))
    throw new MeshError('upgrade-refused', `upgrade from ${installed} to ${target} is a downgrade: use meshctl install for it, or --force`);
  if (to[0] !== from[0] || to[1] - from[1] > 1) {
    throw new MeshError('upgrade-refused', `upgrade from ${installed} to ${target} skips a minor version: upgrade one minor version at a time, or use --force`);
  }
}

/** What the upgrade changes in the installation's configuration, as a unified diff of the two dumps. */
export function upgradeDiff(installed: MeshOperator, next: MeshOperator): string {
  const strip = (config: MeshOperator): MeshOperator => ({ apiVersion: config.apiVersion, kind: config.kind, ...(config.spec ? { spec: config.spec } : {}) });
  const [before, after] = [renderProfileDump(strip(installed), 'yaml', ''), renderProfileDump(strip(next), 'yaml', '')];
  if (before === after) return 'No changes to the installed configuration.\n';
  return `The upgrade changes the installed configuration:\n${createTwoFilesPatch('installed', 'upgrade', before, after, '', '', { context: 2 })}`;
}
