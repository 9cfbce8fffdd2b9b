/** Test and benchmark support: the daemon's config side on a manager, as meshd builds it. */
import type { ConfigSources, ConfigSourcesOptions, MeshEnvironmentOptions } from '../config-pipeline.js';
import { newMeshEnvironment, setupConfigWithManager } from '../config-pipeline.js';
import type { MeshModel } from '../model/mesh-model.js';
import type { Manager } from '../../runtime/index.js';
import { setupAnalysisWithManager } from '../../analysis/index.js';
import { scopedLogger } from '../logger-source.js';

export type ConfigPipelineOptions = Omit<ConfigSourcesOptions, 'environment'> & Omit<MeshEnvironmentOptions, 'useEndpointSlices' | 'clock'>;

export interface ConfigPipeline extends ConfigSources {
  readonly model: MeshModel;
}

/** The environment, the config controllers and (with PILOT_ENABLE_ANALYSIS) the analysis on `manager` (start it to run them). */
export function setupConfigPipeline(manager: Manager, options: ConfigPipelineOptions): ConfigPipeline {
  const environment = newMeshEnvironment({ ...options, useEndpointSlices: options.settings.get('PILOT_USE_ENDPOINT_SLICE'), clock: manager.clock });
  const config = setupConfigWithManager(manager, { ...options, environment });
  if (config.analysisFeed) {
    setupAnalysisWithManager(manager, {
      feed: config.analysisFeed,
      model: environment.model,
      rootNamespace: options.rootNamespace,
      log: scopedLogger(options.log, 'analysis'),
    });
  }
  return { model: environment.model, ...config };
}
