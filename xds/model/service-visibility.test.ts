import { describe, expect, test } from '@jest/globals';
import { newMeshModel } from '../../controllers/index.js';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { applyValidated } from '../testing/mesh-xds.js';
import { buildPushContext } from './push-context.js';
import { serviceVisibilityScope, visibleServices } from './service-visibility.js';

function entry(name: string, exportTo?: string[]): object {
  return {
    apiVersion: 'networking.mesh.io/v1',
    kind: 'ServiceEntry',
    metadata: { name, namespace: 'ext' },
    spec: { hosts: [`${name}.example.com`], resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }], ...(exportTo ? { exportTo } : {}) },
  };
}

function hostsSeen(exportTos: (string[] | undefined)[], namespace: string, defaultServiceExportTo?: string[]): { hosts: string[]; scope: string } {
  const model = newMeshModel({
    domain: 'cluster.local',
    clusterId: 'c',
    useEndpointSlices: false,
    ...(defaultServiceExportTo ? { meshConfig: { ...DEFAULT_MESH_CONFIG, defaultServiceExportTo } } : {}),
  });
  exportTos.forEach((exportTo, i) => applyValidated(model, entry(`e${i}`, exportTo)));
  const push = buildPushContext(model);
  return { hosts: visibleServices(push, namespace).map((service) => service.hostname), scope: serviceVisibilityScope(push, namespace) };
}

describe('service visibility (ServiceEntry exportTo)', () => {
  test('unset and "*" are seen everywhere, and the list is shared by every namespace', () => {
    expect(hostsSeen([undefined, ['*']], 'bar')).toEqual({ hosts: ['e0.example.com', 'e1.example.com'], scope: '*' });
  });

  test('"." keeps an entry to its namespace, "~" hides it, a name exports it there', () => {
    const exportTos = [['.'], ['~'], ['bar'], undefined];
    expect(hostsSeen(exportTos, 'bar')).toEqual({ hosts: ['e2.example.com', 'e3.example.com'], scope: 'bar' });
    expect(hostsSeen(exportTos, 'ext')).toEqual({ hosts: ['e0.example.com', 'e3.example.com'], scope: 'ext' });
  });

  test("the mesh config's defaultServiceExportTo applies to entries that name none", () => {
    expect(hostsSeen([undefined, ['*']], 'bar', ['.'])).toEqual({ hosts: ['e1.example.com'], scope: 'bar' });
    expect(hostsSeen([undefined], 'ext', ['.'])).toEqual({ hosts: ['e0.example.com'], scope: 'ext' });
  });
});
