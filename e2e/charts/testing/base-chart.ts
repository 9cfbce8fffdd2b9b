/** What the base chart's tests share: its folder, its files, and its rendered objects. */
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CHARTS_DIR, helm } from '../../../testing/helm.js';

export const BASE_CHART = join(CHARTS_DIR, 'base');

export interface RenderedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
}

/** `helm template` of the base chart in `namespace`; throws with helm's message when it fails. */
export async function renderBase(workDir: string, args: readonly string[] = [], namespace = 'mesh-system'): Promise<string> {
  const result = await helm(['template', 'base', BASE_CHART, '--namespace', namespace, ...args], { workDir });
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return result.stdout;
}

/** The objects of a multi-document manifest. */
export function objectsOf(manifest: string): RenderedObject[] {
  return parseAllDocuments(manifest)
    .map((doc) => doc.toJS() as RenderedObject | null)
    .filter((object): object is RenderedObject => object !== null);
}

/** The rules of the rendered ClusterRole. */
export function clusterRoleRules(manifest: string): PolicyRule[] {
  const role = objectsOf(manifest).find((object) => object.kind === 'ClusterRole');
  if (!role) throw new Error('the chart rendered no ClusterRole');
  return role['rules'] as PolicyRule[];
}

/** Whether `rules` allow `verb` on `apiGroup`/`resource` (`*` wildcards, `*` + `/status` for any status subresource) as RBAC decides. */
export function allows(rules: readonly PolicyRule[], verb: string, apiGroup: string, resource: string): boolean {
  const [plural, subresource] = resource.split('/');
  const resourceMatches = (pattern: string): boolean =>
    pattern === '*' ||
    pattern === resource ||
    (subresource !== undefined && pattern === `*/${subresource}`) ||
    (subresource === undefined && pattern === plural && !pattern.includes('/'));
  return rules.some(
    (rule) =>
      (rule.verbs.includes('*') || rule.verbs.includes(verb)) &&
      (rule.apiGroups ?? []).some((group) => group === '*' || group === apiGroup) &&
      (rule.resources ?? []).some(resourceMatches),
  );
}
