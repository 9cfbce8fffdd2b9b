import { describe, expect, test } from '@jest/globals';
import { configControllerSettingsFromSettings, statusWriteRateFromSettings } from './config-settings.js';
import { loadSettings } from '../runtime/index.js';

const daemon = (env: Record<string, string>) => loadSettings('pilot-discovery', env);

describe('the config settings', () => {
  test('the controllers: status writing, EndpointSlices and the shared mesh config', () => {
    expect(
      configControllerSettingsFromSettings(daemon({ PILOT_ENABLE_STATUS: 'true', PILOT_STATUS_MAX_WORKERS: '12', SHARED_MESH_CONFIG: 'shared-mesh' })),
    ).toEqual({
      writeStatusConditions: true,
      writeAnalysis: false,
      analysisDebounceMs: 100,
      analysisDebounceMaxMs: 10000,
      statusMaxWorkers: 12,
      useEndpointSlices: false,
      sharedMeshConfigName: 'shared-mesh',
      meshConfigMapName: 'mesh',
    });
  });

  test('a revision reads its own mesh ConfigMap, as the meshd chart names it', () => {
    expect(configControllerSettingsFromSettings(daemon({ REVISION: 'canary' })).meshConfigMapName).toBe('mesh-canary');
    expect(configControllerSettingsFromSettings(daemon({ REVISION: 'default' })).meshConfigMapName).toBe('mesh');
  });

  test('the pace of status writes', () => {
    expect(statusWriteRateFromSettings(daemon({ PILOT_STATUS_QPS: '2.5', PILOT_STATUS_BURST: '5' }))).toEqual({ qps: 2.5, burst: 5 });
  });

  test('a bad value is refused naming its setting', () => {
    expect(() => configControllerSettingsFromSettings(daemon({ PILOT_STATUS_MAX_WORKERS: '0' }))).toThrow(/for PILOT_STATUS_MAX_WORKERS/);
  });
});
