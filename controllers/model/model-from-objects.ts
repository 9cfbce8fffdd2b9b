import { validateResource, type MeshConfig, type TypedResource } from '../../crds/index.js';
import type { KubeObject } from '../../runtime/index.js';
import { parseSecretCredential } from '../reconcilers/secret-credential.js';
import { newMeshModel, type MeshModelWriter } from './mesh-model.js';
import { namespaceFromObject, serviceFromObject, workloadFromPod } from './registry-conversion.js';

export interface ObjectsModelOptions {
  readonly domain: string;
  readonly clusterId: string;
  readonly meshConfig?: MeshConfig;
}

/** An object the model did not take, and why. */
export interface RejectedObject {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly reason: string;
}

/**
 * A model filled from a list of objects through its own writers, as the reconcilers fill it:
 * Namespaces, Services, Pods (endpoints from their selectors), credential Secrets and the mesh
 * kinds. Other kinds are ignored; an invalid object is left out and reported.
 */
export function modelFromObjects(objects: readonly KubeObject[], options: ObjectsModelOptions): { model: MeshModelWriter; rejected: RejectedObject[] } {
  const model = newMeshModel({
    domain: options.domain,
    clusterId: options.clusterId,
    useEndpointSlices: false,
    ...(options.meshConfig ? { meshConfig: options.meshConfig } : {}),
  });
  const rejected: RejectedObject[] = [];
  const reject = (object: KubeObject, reason: string): void =>
    void rejected.push({ kind: String(object.kind), namespace: object.metadata?.namespace ?? '', name: object.metadata?.name ?? '', reason });
  for (const object of objects) {
    switch (object.kind) {
      case 'Namespace': {
        const namespace = namespaceFromObject(object);
        if (namespace) model.registry.applyNamespace(namespace);
        else reject(object, 'no name');
        break;
      }
      case 'Service': {
        const service = serviceFromObject(object, options.domain);
        if (service) model.registry.applyService(service);
        else reject(object, 'not a valid Service');
        break;
      }
      case 'Pod': {
        const workload = workloadFromPod(object, options.clusterId);
        if (workload) model.registry.applyWorkload(workload);
        else reject(object, 'not a valid Pod');
        break;
      }
      case 'Secret': {
        const parsed = parseSecretCredential(object as Parameters<typeof parseSecretCredential>[0]);
        if (parsed.kind === 'credential') model.credentials.apply(parsed.credential);
        break;
      }
      default: {
        if (!String(object.apiVersion ?? '').includes('mesh.io/')) break;
        const result = validateResource(object);
        if (result.errors.length > 0) reject(object, result.errors.map((error) => `${error.path}: ${error.message}`).join('; '));
        else model.configStore.apply(result.resource as TypedResource);
      }
    }
  }
  return { model, rejected };
}
