/**
 * The config side's one reader of the daemon's settings: each function maps the settings one part
 * reads into that part's own options.
 */
import type { ConfigControllerSettings } from './reconcilers/register-config-controllers.js';
import type { Settings } from '../runtime/index.js';
import type { KubeThrottleOptions } from './sources/kube-throttle.js';
import { MESH_CONFIG_MAP_NAME, revisionedName } from '../names/index.js';

type DaemonSettings = Settings<'pilot-discovery'>;

export function configControllerSettingsFromSettings(settings: DaemonSettings): ConfigControllerSettings {
  return {
    writeStatusConditions: settings.get('PILOT_ENABLE_STATUS'),
    writeAnalysis: settings.get('PILOT_ENABLE_ANALYSIS'),
    analysisDebounceMs: settings.get('PILOT_DEBOUNCE_AFTER'),
    analysisDebounceMaxMs: settings.get('PILOT_DEBOUNCE_MAX'),
    statusMaxWorkers: settings.get('PILOT_STATUS_MAX_WORKERS'),
    useEndpointSlices: settings.get('PILOT_USE_ENDPOINT_SLICE'),
    sharedMeshConfigName: settings.get('SHARED_MESH_CONFIG'),
    meshConfigMapName: meshConfigMapNameOf(settings.get('REVISION')),
  };
}

/** PILOT_STATUS_QPS and PILOT_STATUS_BURST: the pace of status writes to the API server. */
export function statusWriteRateFromSettings(settings: DaemonSettings): Pick<KubeThrottleOptions, 'qps' | 'burst'> {
  return { qps: settings.get('PILOT_STATUS_QPS'), burst: settings.get('PILOT_STATUS_BURST') };
}

/** The mesh ConfigMap of a revision, as the meshd chart names it: `mesh`, or `mesh-<revision>`. */
export function meshConfigMapNameOf(revision: string): string {
  return revisionedName(MESH_CONFIG_MAP_NAME, revision);
}

/** PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION, _HEALTHCHECKS and PILOT_WORKLOAD_ENTRY_GRACE_PERIOD. */
export function workloadEntrySettingsFromSettings(settings: DaemonSettings): { autoRegistration: boolean; healthChecks: boolean; gracePeriodMs: number } {
  return {
    autoRegistration: settings.get('PILOT_ENABLE_WORKLOAD_ENTRY_AUTOREGISTRATION'),
    healthChecks: settings.get('PILOT_ENABLE_WORKLOAD_ENTRY_HEALTHCHECKS'),
    gracePeriodMs: settings.get('PILOT_WORKLOAD_ENTRY_GRACE_PERIOD'),
  };
}
