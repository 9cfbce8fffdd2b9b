import type { FastifyInstance } from 'fastify';
import { KIND_NAMES } from '../crds/index.js';
import type { MeshModel } from './model/mesh-model.js';

/**
 * `/debug/configz` (the accepted mesh resources, last good versions), `/debug/registryz` (the
 * services, workloads and endpoints of the registry), `/debug/endpointz` (every service port's
 * endpoints: addresses, readiness, sidecar) and `/debug/mesh` (the mesh config in effect), for the
 * daemon's debug ports.
 */
export function modelDebugRoutes(model: MeshModel): (app: FastifyInstance) => void {
  return (app) => {
    app.get('/debug/configz', async () =>
      KIND_NAMES.flatMap((kind) =>
        model.configStore.list(kind).map((entry) => ({
          kind: entry.kind,
          namespace: entry.namespace,
          name: entry.name,
          resourceVersion: entry.resourceVersion,
          storeVersion: entry.version,
          spec: (entry.resource as { spec?: unknown }).spec,
        })),
      ),
    );
    app.get('/debug/mesh', async () => model.meshConfig());
    app.get('/debug/registryz', async () =>
      model.registry.services().map((service) => ({
        ...service,
        endpoints: model.registry.endpoints(service.namespace, service.name),
      })),
    );
    app.get('/debug/endpointz', async () =>
      model.registry.services().flatMap((service) =>
        service.ports.map((port) => ({
          service: service.hostname,
          port: port.port,
          endpoints: model.registry.endpoints(service.namespace, service.name, port.port),
        })),
      ),
    );
  };
}
