import type { KubernetesObject } from '@kubernetes/client-node';
import { MeshError, UsageError } from '../../runtime/index.js';
import {
  EXIT_USAGE,
  buildOperatorConfig,
  objectKey,
  objectsOfManifest,
  operatorValuesSchema,
  renderChart,
  waitUntilEstablished,
  type ClusterObjects,
  type OperatorValues,
} from '../../install/index.js';

export interface OperatorChartOptions {
  /** Holds `charts/` and `profiles/`. */
  readonly manifestsDir: string;
  readonly hub: string;
  readonly tag: string;
  readonly imagePullSecrets: readonly string[];
  readonly operatorNamespace: string;
  readonly watchedNamespaces: string;
  readonly revision: string;
  readonly helm?: string;
}

/** The operator chart's values from the flags, checked against its schema (a bad one names the flag). */
export function operatorValuesOf(options: OperatorChartOptions): OperatorValues {
  const parsed = operatorValuesSchema.safeParse({
    hub: options.hub,
    tag: options.tag,
    imagePullSecrets: [...options.imagePullSecrets],
    operatorNamespace: options.operatorNamespace,
    watchedNamespaces: options.watchedNamespaces,
    revision: options.revision,
  });
  if (!parsed.success) {
    const flags: Record<string, string> = {
      operatorNamespace: '--operatorNamespace',
      watchedNamespaces: '--watchedNamespaces',
      revision: '--revision',
      imagePullSecrets: '--imagePullSecrets',
      hub: '--hub',
      tag: '--tag',
    };
    const problems = parsed.error.issues.map((issue) => `${flags[String(issue.path[0])] ?? issue.path.join('.')}: ${issue.message}`);
    throw new UsageError(problems.join('; '), { exitCode: EXIT_USAGE });
  }
  return parsed.data;
}

/** `meshctl operator dump`: the operator chart rendered (its CRD first). */
export async function renderOperator(options: OperatorChartOptions, includeCrds = true): Promise<string> {
  const values = operatorValuesOf(options);
  return renderChart(
    { chart: 'operator', release: 'mesh-operator', namespace: values.operatorNamespace, values, includeCrds },
    { manifestsDir: options.manifestsDir, ...(options.helm ? { helm: options.helm } : {}) },
  );
}

export interface OperatorInitOptions extends OperatorChartOptions {
  readonly cluster: ClusterObjects;
  /** `-f`: a MeshOperator to create in the watched namespace once the operator is installed. */
  readonly files: readonly string[];
  readonly dryRun: boolean;
  readonly progress: (line: string) => void;
}

/**
 * `meshctl operator init`: the operator chart applied server-side (its CRD established first),
 * then, with `-f`, the MeshOperator it is to reconcile, in its namespace (created when missing).
 */
export async function initOperator(options: OperatorInitOptions): Promise<void> {
  const { cluster, progress } = options;
  const values = operatorValuesOf(options);
  const meshOperator =
    options.files.length > 0
      ? buildOperatorConfig({ manifestsDir: options.manifestsDir, files: options.files, sets: [], revision: options.revision })
      : undefined;
  const objects = objectsOfManifest(await renderOperator(options));
  const image = objects.find((o) => o.kind === 'Deployment') as
    (KubernetesObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }) | undefined;
  progress(
    `Installing operator controller in namespace: ${values.operatorNamespace} using image: ${image?.spec?.template?.spec?.containers?.[0]?.image ?? ''}`,
  );
  progress(`Operator controller will watch namespaces: ${values.watchedNamespaces}`);
  for (const object of objects) await applyNaming(cluster, object, options.dryRun);
  progress('✔ Mesh operator installed');
  if (!meshOperator) return;
  if (!options.dryRun) await waitUntilEstablished(cluster, objects, 30_000);
  const namespace = meshOperator.metadata?.namespace ?? values.watchedNamespaces.split(',')[0] ?? 'mesh-system';
  const name = meshOperator.metadata?.name ?? 'mesh-control-plane';
  await applyNaming(cluster, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, options.dryRun);
  await applyNaming(cluster, { ...meshOperator, metadata: { ...meshOperator.metadata, name, namespace } } as KubernetesObject, options.dryRun);
  progress(`✔ MeshOperator ${namespace}/${name} created: the operator installs it`);
}

export interface OperatorRemoveOptions extends OperatorChartOptions {
  readonly cluster: ClusterObjects;
  readonly force: boolean;
  readonly dryRun: boolean;
  readonly progress: (line: string) => void;
}

/**
 * `meshctl operator remove`: the operator's objects deleted (its namespace last), leaving the CRD
 * and the MeshOperators, and so what they installed. Refused when no operator is installed in
 * `--operatorNamespace`, unless `--force`.
 */
export async function removeOperator(options: OperatorRemoveOptions): Promise<void> {
  const { cluster, progress } = options;
  const objects = objectsOfManifest(await renderOperator(options, false));
  const deployment = objects.find((o) => o.kind === 'Deployment');
  if (deployment && !(await cluster.read(deployment)) && !options.force) {
    throw new MeshError('install-failed', `Operator controller is not installed in ${options.operatorNamespace} namespace.`);
  }
  progress('Removing mesh operator...');
  const ordered = [...objects.filter((o) => o.kind !== 'Namespace'), ...objects.filter((o) => o.kind === 'Namespace')];
  for (const object of ordered) {
    await cluster.remove(object, options.dryRun);
    progress(`  Removed ${objectKey(object)}${options.dryRun ? ' (dry run)' : ''}.`);
  }
  progress('✔ Removal complete');
}

async function applyNaming(cluster: ClusterObjects, object: KubernetesObject, dryRun: boolean): Promise<void> {
  try {
    await cluster.apply(object, dryRun);
  } catch (error) {
    const body = (error as { body?: unknown }).body;
    const message = typeof body === 'string' ? ((JSON.parse(body) as { message?: string }).message ?? body) : String(error);
    throw new MeshError('install-failed', `failed to apply ${objectKey(object)}: ${message}`, { cause: error });
  }
}
