import { ANNOTATIONS, revisionLabelValue } from '../../names/index.js';
import { objectList, stringMap, type JsonObject, type Pod } from './pod.js';

/** The `sidecar.mesh.io/status` annotation: what injection added, so that it can be taken away. */
export interface InjectionStatus {
  readonly initContainers: string[] | null;
  readonly containers: string[] | null;
  readonly volumes: string[] | null;
  readonly imagePullSecrets: string[] | null;
  readonly revision: string;
}

/** The status of what the rendered templates (merged into one partial pod) add; empty lists are null, as the reference writes them. */
export function injectionStatusOf(templatePod: Pod, revision: string): InjectionStatus {
  const spec = (templatePod['spec'] ?? {}) as JsonObject;
  const names = (field: string): string[] | null => {
    const list = objectList(spec, field).map((item) => String(item['name']));
    return list.length === 0 ? null : list;
  };
  return {
    initContainers: names('initContainers'),
    containers: names('containers'),
    volumes: names('volumes'),
    imagePullSecrets: names('imagePullSecrets'),
    revision: revisionLabelValue(revision),
  };
}

/** The status annotation of a pod, or undefined when the pod was never injected (or the annotation is unreadable). */
export function readInjectionStatus(pod: Pod): InjectionStatus | undefined {
  const text = stringMap((pod['metadata'] as JsonObject | undefined)?.['annotations'])[ANNOTATIONS.status];
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<InjectionStatus>;
    const list = (value: unknown): string[] | null => (Array.isArray(value) ? value.map(String) : null);
    return {
      initContainers: list(parsed.initContainers),
      containers: list(parsed.containers),
      volumes: list(parsed.volumes),
      imagePullSecrets: list(parsed.imagePullSecrets),
      revision: typeof parsed.revision === 'string' ? parsed.revision : 'default',
    };
  } catch {
    return undefined;
  }
}
