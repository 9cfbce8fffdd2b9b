/** Test and benchmark support: the daemon's config side on a manager, as meshd builds it. */
import type { ConfigSources, ConfigSourcesOptions, MeshEnvironmentOptions } from '../config-pipeline.js';
import { newMeshEnvironment, setupConfigWithManager } from '../config-pipeline.js';
import type { MeshModel } from '../model/mesh-model.js';
import type { Manager } from '../../runtime/index.js';

export type ConfigPipelineOptions = Omit<ConfigSourcesOptions, 'environment'> & Omit<MeshEnvironmentOptions, 'useEndpointSlices' | 'clock'>;

export interface ConfigPipeline extends ConfigSources {
  readonly model: MeshModel;
}

/** The environment and the config controllers on `manager` (start it to run them). */
export function setupConfigPipeline(manager: Manager, options: ConfigPipelineOptions): ConfigPipeline {
  const environment = newMeshEnvironment({ ...options, useEndpointSlices: options.settings.get('PILOT_USE_ENDPOINT_SLICE'), clock: manager.clock });
  return { model: environment.model, ...setupConfigWithManager(manager, { ...options, environment }) };
}
