import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  makeGenericClientConstructor,
  type ChannelCredentials,
  type ChannelOptions,
  type Client,
  type Metadata,
  type ServiceClientConstructor,
  type ServiceDefinition,
  type ServiceError,
} from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { MeshError } from '../../runtime/index.js';
import { grpcServiceDefinition } from '../../xds/envoy/index.js';

export const MESH_CERTIFICATE_SERVICE = 'mesh.v1.auth.MeshCertificateService';

const PROTO_FILE = 'mesh-certificate.proto';

export interface MeshCertificateRequest {
  csr: string;
  /** Seconds. */
  validity_duration: number;
  metadata?: { fields: Record<string, unknown> } | null;
}

export interface MeshCertificateResponse {
  cert_chain: string[];
}

/**
 * Where `mesh-certificate.proto` is: beside this module in the source tree; from compiled
 * output (`dist/ca/server/`, a bench build, the agent's bundle), the `ca/server/proto/` folder of the nearest ancestor that has
 * one, since the TypeScript build does not copy `.proto` files.
 */
export function meshCertificateProtoPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'proto', PROTO_FILE)];
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    candidates.push(join(dir, 'ca', 'server', 'proto', PROTO_FILE));
    if (dirname(dir) === dir) break;
  }
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new MeshError('proto-missing', `${PROTO_FILE} not found beside ${here} or in an ancestor's ca/server/proto/`);
  return found;
}

/**
 * Loads the proto (at call time, never at import) with protobufjs, which the agent holds anyway
 * for SDS, and returns the service's client constructor (its `service` serves the server side).
 */
export function loadMeshCertificateService(): ServiceClientConstructor {
  const root = new protobuf.Root();
  // `google/protobuf/struct.proto` comes from protobufjs's bundled common types.
  root.loadSync(meshCertificateProtoPath(), { keepCase: true });
  root.resolveAll();
  return makeGenericClientConstructor(grpcServiceDefinition(root.lookupService(MESH_CERTIFICATE_SERVICE)), 'MeshCertificateService');
}

export function meshCertificateServiceDefinition(): ServiceDefinition {
  return loadMeshCertificateService().service;
}

/** A typed client of the certificate service (for the agent, tests and the bench). */
export interface MeshCertificateClient {
  createCertificate(request: MeshCertificateRequest, metadata: Metadata, options?: { deadline?: Date }): Promise<string[]>;
  close(): void;
  readonly raw: Client;
}

export function newMeshCertificateClient(target: string, credentials: ChannelCredentials, options?: ChannelOptions): MeshCertificateClient {
  const Service = loadMeshCertificateService();
  const client = new Service(target, credentials, options) as unknown as Client & {
    CreateCertificate(
      request: MeshCertificateRequest,
      metadata: Metadata,
      options: { deadline?: Date },
      callback: (err: ServiceError | null, response?: MeshCertificateResponse) => void,
    ): void;
  };
  return {
    raw: client,
    close: () => client.close(),
    createCertificate: (request, metadata, callOptions = {}) =>
      new Promise((resolve, reject) => {
        client.CreateCertificate(request, metadata, callOptions, (err, response) => {
          if (err) reject(err);
          else resolve(response?.cert_chain ?? []);
        });
      }),
  };
}
