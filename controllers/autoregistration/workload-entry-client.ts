import type { KubeConfig } from '@kubernetes/client-node';
import { KINDS } from '../../crds/index.js';
import type { WorkloadEntryObject, WorkloadGroupObject } from './workload-entry-state.js';

/** What auto-registration reads and writes of WorkloadEntries and WorkloadGroups. */
export interface WorkloadEntryClient {
  /** The apiVersion entries are written with. */
  readonly apiVersion: string;
  getEntry(namespace: string, name: string): Promise<WorkloadEntryObject | undefined>;
  getGroup(namespace: string, name: string): Promise<WorkloadGroupObject | undefined>;
  listEntries(): Promise<readonly WorkloadEntryObject[]>;
  /** `conflict` when it exists already. */
  createEntry(entry: WorkloadEntryObject): Promise<'created' | 'conflict'>;
  /** Replaces metadata and spec at the entry's resourceVersion: `conflict` when it moved on, `gone` when deleted. */
  updateEntry(entry: WorkloadEntryObject): Promise<'updated' | 'conflict' | 'gone'>;
  /** Replaces the status subresource at the entry's resourceVersion. */
  updateStatus(entry: WorkloadEntryObject): Promise<'updated' | 'conflict' | 'gone'>;
  /** Deletes the entry if it is still at `resourceVersion`. */
  deleteEntry(namespace: string, name: string, resourceVersion: string | undefined): Promise<'deleted' | 'conflict' | 'gone'>;
}

/** The client over the API server, through the custom objects API; `Content-Type` and retries are client-node's. */
export async function newKubeWorkloadEntryClient(kubeConfig: KubeConfig): Promise<WorkloadEntryClient> {
  const k8s = await import('@kubernetes/client-node');
  const api = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
  const entries = KINDS.WorkloadEntry;
  const groups = KINDS.WorkloadGroup;
  const where = (namespace: string, name: string) => ({ group: entries.group, version: entries.version, plural: entries.plural, namespace, name });
  const codeOf = (error: unknown): number | undefined => (error instanceof k8s.ApiException ? error.code : undefined);
  const outcome = async <T extends string>(call: () => Promise<unknown>, done: T): Promise<T | 'conflict' | 'gone'> => {
    try {
      await call();
      return done;
    } catch (error) {
      const code = codeOf(error);
      if (code === 409) return 'conflict';
      if (code === 404) return 'gone';
      throw error;
    }
  };
  const orUndefined = async <T>(call: () => Promise<unknown>): Promise<T | undefined> => {
    try {
      return (await call()) as T;
    } catch (error) {
      if (codeOf(error) === 404) return undefined;
      throw error;
    }
  };
  return {
    apiVersion: `${entries.group}/${entries.version}`,
    getEntry: (namespace, name) => orUndefined(() => api.getNamespacedCustomObject(where(namespace, name))),
    getGroup: (namespace, name) =>
      orUndefined(() => api.getNamespacedCustomObject({ group: groups.group, version: groups.version, plural: groups.plural, namespace, name })),
    async listEntries() {
      const list = (await api.listClusterCustomObject({ group: entries.group, version: entries.version, plural: entries.plural })) as {
        items?: WorkloadEntryObject[];
      };
      return list.items ?? [];
    },
    async createEntry(entry) {
      const result = await outcome(
        () => api.createNamespacedCustomObject({ group: entries.group, version: entries.version, plural: entries.plural, namespace: ns(entry), body: entry }),
        'created',
      );
      return result === 'gone' ? 'conflict' : result;
    },
    updateEntry: (entry) => outcome(() => api.replaceNamespacedCustomObject({ ...where(ns(entry), entry.metadata.name), body: entry }), 'updated'),
    updateStatus: (entry) => outcome(() => api.replaceNamespacedCustomObjectStatus({ ...where(ns(entry), entry.metadata.name), body: entry }), 'updated'),
    deleteEntry: (namespace, name, resourceVersion) =>
      outcome(
        () =>
          api.deleteNamespacedCustomObject({
            ...where(namespace, name),
            ...(resourceVersion ? { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } } } : {}),
          }),
        'deleted',
      ),
  };
}

function ns(entry: WorkloadEntryObject): string {
  return entry.metadata.namespace ?? '';
}
