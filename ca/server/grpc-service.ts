import { status, type Server, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { CaError } from '../ca-error.js';
import type { AuthContext } from '../authn/authenticator.js';
import { newCertificateService, type CertificateServiceOptions } from './certificate-service.js';
import { loadMeshCertificateService, type MeshCertificateRequest, type MeshCertificateResponse } from './mesh-certificate-proto.js';

/**
 * Adds `mesh.v1.auth.MeshCertificateService` to a grpc-js server the caller owns (the secure
 * port 15012 is shared with xDS). The server's TLS decides whether peer certificates arrive.
 */
export function newCaGrpcService(server: Server, options: CertificateServiceOptions): void {
  const service = newCertificateService(options);
  server.addService(loadMeshCertificateService().service, {
    CreateCertificate: (call: ServerUnaryCall<MeshCertificateRequest, MeshCertificateResponse>, callback: sendUnaryData<MeshCertificateResponse>) => {
      const request = call.request;
      service.createCertificate({ csr: request.csr ?? '', validityDurationSeconds: Number(request.validity_duration ?? 0) }, authContextOf(call, request)).then(
        (chain) => callback(null, { cert_chain: chain }),
        (err: unknown) => callback({ code: grpcCode(err), details: grpcMessage(err) }),
      );
    },
  });
}

function authContextOf(call: ServerUnaryCall<unknown, unknown>, request: MeshCertificateRequest): AuthContext {
  const header = call.metadata.get('authorization').find((v): v is string => typeof v === 'string');
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  const peer = call.getAuthContext?.()?.sslPeerCertificate;
  // The cluster a caller claims: the `ClusterID` gRPC metadata (as the reference's agent sends it) or the request's metadata.
  const clusterId = call.metadata.get('clusterid').find((v): v is string => typeof v === 'string') ?? structString(request.metadata, 'ClusterID');
  return {
    ...(match ? { bearerToken: match[1]! } : {}),
    ...(peer?.raw ? { peerCertificates: [peer.raw] } : {}),
    ...(clusterId !== undefined ? { clusterId } : {}),
  };
}

/** A string field of a google.protobuf.Struct as grpc-js decodes it (`fields.<name>.string_value`). */
function structString(struct: MeshCertificateRequest['metadata'], name: string): string | undefined {
  const value = (struct as { fields?: Record<string, { string_value?: string; stringValue?: string }> } | null | undefined)?.fields?.[name];
  return value?.string_value ?? value?.stringValue;
}

function grpcCode(err: unknown): status {
  if (!(err instanceof CaError)) return status.INTERNAL;
  switch (err.code) {
    case 'unauthenticated':
      return status.UNAUTHENTICATED;
    case 'csr-malformed':
    case 'csr-signature':
    case 'csr-unsupported':
    case 'ttl-too-long':
    case 'identity-invalid':
      return status.INVALID_ARGUMENT;
    case 'ca-unavailable':
      return status.UNAVAILABLE;
    default:
      return status.INTERNAL;
  }
}

/** Refusals of the caller's input say what was wrong; authentication and internal failures do not. */
function grpcMessage(err: unknown): string {
  if (err instanceof CaError && grpcCode(err) === status.INVALID_ARGUMENT) return err.message;
  if (err instanceof CaError && err.code === 'unauthenticated') return 'request authentication failed';
  if (err instanceof CaError && err.code === 'ca-unavailable') return 'the CA is not ready';
  return 'certificate signing failed';
}
