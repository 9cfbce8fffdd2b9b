// What a workload needs of the CA, and nothing that pulls in the server or Kubernetes: build a
// CSR and call the certificate service. The agent imports this, not `ca/index.ts`, whose
// re-exports of the Kubernetes stores and authenticators would load @kubernetes/client-node (a
// large share of the agent's memory) into every sidecar.
export { buildCsr, type CsrOptions } from '../x509/csr-builder.js';
export {
  newMeshCertificateClient,
  type MeshCertificateClient,
  type MeshCertificateRequest,
  type MeshCertificateResponse,
} from '../server/mesh-certificate-proto.js';
