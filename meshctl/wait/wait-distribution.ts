import type { KubeConfig } from '@kubernetes/client-node';
import { KINDS, KIND_NAMES, UNTRANSLATED_KINDS, type KindName } from '../../crds/index.js';
import { MeshError, UsageError } from '../../runtime/index.js';
import { queryDaemons } from '../proxystatus/daemon-query.js';

export interface WaitOptions {
  /** `--for`: `distribution` (the generation reached the proxies) or `delete` (they no longer have it). */
  readonly for: 'distribution' | 'delete';
  /** `--generation`; default the object's current `metadata.generation`. */
  readonly generation?: string;
  /** `--threshold`: the share of proxy configurations that must have it (0 to 1). */
  readonly threshold: number;
  readonly timeoutMs: number;
  readonly revision: string;
  readonly meshNamespace: string;
  /** Between two polls; default 1 s, as the reference. */
  readonly pollMs?: number;
}

/** A mesh kind from what users type: its kind, singular, plural or short name, any case. */
export function kindOf(type: string): KindName {
  const wanted = type.toLowerCase();
  const kind = KIND_NAMES.find((name) => {
    const info = KINDS[name];
    return [name.toLowerCase(), info.singular, info.plural, ...(info.shortNames ?? [])].includes(wanted);
  });
  if (!kind) throw new UsageError(`type ${type} is not a mesh config kind: one of ${KIND_NAMES.join(', ')}`, { exitCode: 64 });
  return kind;
}

interface SyncedVersions {
  readonly proxy: string;
  readonly cluster_acked: string;
  readonly listener_acked: string;
  readonly route_acked: string;
}

/**
 * `meshctl x wait`: polls every daemon's `/debug/config_distribution` until the share of the
 * proxies' acknowledged configurations (CDS, LDS, RDS of each) carrying the resource's generation
 * (or, with `--for delete`, no longer carrying it) reaches the threshold; the reference's lines.
 */
export async function waitForDistribution(kubeConfig: KubeConfig, type: string, target: string, namespace: string, options: WaitOptions): Promise<string> {
  const kind = kindOf(type);
  // Nothing of it reaches a proxy, so no proxy ever acknowledges a generation of it: say so now, not after --timeout.
  if (UNTRANSLATED_KINDS.has(kind))
    throw new UsageError(`type ${type}: ${kind} is not sent to proxies, there is no distribution to wait for`, { exitCode: 64 });
  const dot = target.indexOf('.');
  const [name, ns] = dot >= 0 ? [target.slice(0, dot), target.slice(dot + 1)] : [target, namespace];
  const key = `${kind}/${ns}/${name}`;
  let generation = options.generation;
  if (options.for === 'distribution' && generation === undefined) {
    const { CustomObjectsApi } = await import('@kubernetes/client-node');
    const info = KINDS[kind];
    const object = (await kubeConfig
      .makeApiClient(CustomObjectsApi)
      .getNamespacedCustomObject({ group: info.group, version: info.version, namespace: ns, plural: info.plural, name })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code === 404)
          throw new MeshError('pod-not-found', `${info.plural}.${info.group} "${name}" not found in namespace ${ns}`);
        throw error;
      })) as { metadata?: { generation?: number } };
    generation = String(object.metadata?.generation ?? '');
  }
  const reached = (acked: string): boolean => (options.for === 'delete' ? acked === '' : acked !== '' && Number(acked) >= Number(generation));
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const { answers } = await queryDaemons(kubeConfig, {
      meshNamespace: options.meshNamespace,
      revision: options.revision,
      path: `/debug/config_distribution?resource=${encodeURIComponent(key)}`,
      timeoutMs: Math.max(1000, Math.min(10_000, deadline - Date.now())),
    });
    const entries = [...answers.values()].flatMap((body) => JSON.parse(body) as SyncedVersions[]);
    const configurations = entries.flatMap((entry) => [entry.cluster_acked, entry.listener_acked, entry.route_acked]);
    const present = configurations.filter(reached).length;
    if (configurations.length > 0 && present / configurations.length >= options.threshold) {
      return `Resource ${key} ${options.for === 'delete' ? 'removed from' : 'present on'} ${present} out of ${configurations.length} configurations for totally ${entries.length} sidecars\n`;
    }
    if (Date.now() >= deadline) throw new MeshError('proxy-config-failed', `timeout expired before resource ${key} became effective on all sidecars`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
  }
}
