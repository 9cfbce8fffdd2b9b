import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import type { MeshConfig } from '../../crds/index.js';
import { stableJson } from '../stable-json.js';
import { newConfigStore, type ConfigStore, type ConfigStoreWriter } from './config-store.js';
import { newCredentialStore, type CredentialStore, type CredentialStoreWriter } from './credential-store.js';
import { newServiceRegistry, type ServiceRegistry, type ServiceRegistryWriter } from './service-registry.js';

/** The in-memory model the push pipeline reads: policies, the service registry and the mesh config. */
export interface MeshModel {
  readonly configStore: ConfigStore;
  readonly registry: ServiceRegistry;
  /** TLS credentials from Secrets, for gateways' `credentialName`. */
  readonly credentials: CredentialStore;
  /** The current mesh config (the last good one). */
  meshConfig(): MeshConfig;
  /** The DNS suffix of service host names (`--domain`). */
  readonly domain: string;
  /** `--clusterID`: the cluster every workload of this registry belongs to. */
  readonly clusterId: string;
  /** How ServiceEntries, WorkloadEntries and Services select one another's workloads. */
  readonly selection: WorkloadSelection;
}

/** Which workloads a selector reaches beyond the Services-select-pods of Kubernetes. */
export interface WorkloadSelection {
  /** `PILOT_ENABLE_SERVICEENTRY_SELECT_PODS`: a ServiceEntry's `workloadSelector` selects pods. */
  readonly serviceEntriesSelectPods: boolean;
  /** `PILOT_ENABLE_ORCH_SELECT_WORKLOAD_ENTRIES`: a Kubernetes Service's selector selects WorkloadEntries. */
  readonly servicesSelectWorkloadEntries: boolean;
}

/** The reference's defaults: both on. */
export const DEFAULT_WORKLOAD_SELECTION: WorkloadSelection = { serviceEntriesSelectPods: true, servicesSelectWorkloadEntries: true };

/** The model as the reconcilers hold it: the same object with its write sides. */
export interface MeshModelWriter extends MeshModel {
  readonly configStore: ConfigStoreWriter;
  readonly registry: ServiceRegistryWriter;
  readonly credentials: CredentialStoreWriter;
  /** False when the new config equals the current one. */
  setMeshConfig(config: MeshConfig): boolean;
}

export interface MeshModelOptions {
  domain: string;
  clusterId: string;
  /** Endpoints from EndpointSlices instead of the pods Services select (`PILOT_USE_ENDPOINT_SLICE`). */
  useEndpointSlices: boolean;
  /** Default: the built-in defaults. */
  meshConfig?: MeshConfig;
  /** Default: both selections on, as the reference. */
  selection?: WorkloadSelection;
}

export function newMeshModel(options: MeshModelOptions): MeshModelWriter {
  let meshConfig = options.meshConfig ?? DEFAULT_MESH_CONFIG;
  let meshConfigJson = stableJson(meshConfig);
  const configStore = newConfigStore();
  const registry = newServiceRegistry({
    endpointSource: options.useEndpointSlices ? 'endpoint-slices' : 'pods',
    clusterId: options.clusterId,
  });
  return {
    configStore,
    registry,
    credentials: newCredentialStore(),
    domain: options.domain,
    clusterId: options.clusterId,
    selection: options.selection ?? DEFAULT_WORKLOAD_SELECTION,
    meshConfig: () => meshConfig,
    setMeshConfig(config) {
      const json = stableJson(config);
      if (json === meshConfigJson) return false;
      meshConfig = config;
      meshConfigJson = json;
      return true;
    },
  };
}
