// The certificate authority: root of trust (self-signed or plugged), signing, root rotation.
export { CaError, type CaErrorCode } from './ca-error.js';
export { CA_FILES, SELF_SIGNED_SECRET_NAME, type CaStore, type StoredCa } from './ca-store.js';
export { newFolderCaStore } from './folder-ca-store.js';
export { newKubeSecretCaStore, type KubeSecretCaStoreOptions } from './kube-secret-ca-store.js';
export { readPluggedCa } from './plugged-ca.js';
export { loadKeyCertBundle, type CaMaterial, type KeyCertBundle } from './key-cert-bundle.js';
export { parseCertificate, parseCertificatesPem, type CertificateInfo } from './certificate-info.js';
export { newCaSigner, type CaKeyType, type CaSigner } from './signer.js';
export {
  buildSelfSignedRoot,
  generateCaKey,
  newSelfSignedMaterial,
  rotateSelfSignedMaterial,
  type CaKeyOptions,
  type RootCertOptions,
  type RotateOptions,
  type SelfSignedOptions,
} from './self-signed-root.js';
export { parseAndVerifyCsr, verifyCsrDer, type VerifiedCsr } from './csr.js';
export { buildCsr, type CsrOptions } from './csr-builder.js';
export type { SubjectAltNames } from './certificate-builder.js';
export {
  newCertificateAuthority,
  recordExpiry,
  type CertificateAuthority,
  type CertificateAuthorityOptions,
  type IssueRequest,
  type IssuedCertificate,
} from './certificate-authority.js';
export { newRootRotator, type RootCheckResult, type RootRotator, type RootRotatorOptions } from './root-rotator.js';
export { newMeshCa, type MeshCa, type MeshCaOptions } from './new-mesh-ca.js';
export { parseServiceAccountUser, parseSpiffeId, spiffeId, type WorkloadIdentity } from './spiffe.js';
export { decodePemBlocks, encodePem, type PemBlock } from '../pki/index.js';
// The certificate service: authenticators, the transport-free core, gRPC.
export type { AuthContext, Authenticator, Caller } from './authenticator.js';
export { newKubeTokenAuthenticator, hasAudienceClaim, type JwtPolicy, type KubeTokenAuthenticatorOptions } from './kube-token-authenticator.js';
export { newJwtAuthenticator, parseJwtRule, jwtRuleFromSettings, type JwtAuthenticatorOptions, type JwtRule } from './jwt-authenticator.js';
export { newClientCertAuthenticator, type ClientCertAuthenticatorOptions } from './client-cert-authenticator.js';
export { newCaAuthenticators, type CaAuthenticatorsOptions } from './ca-authenticators.js';
export { newCertificateService, type CertificateService, type CertificateServiceOptions, type CreateCertificateInput } from './certificate-service.js';
export {
  MESH_CERTIFICATE_SERVICE,
  loadMeshCertificateService,
  meshCertificateProtoPath,
  meshCertificateServiceDefinition,
  newMeshCertificateClient,
  type MeshCertificateClient,
  type MeshCertificateRequest,
  type MeshCertificateResponse,
} from './mesh-certificate-proto.js';
export { newCaGrpcService } from './grpc-service.js';
export {
  daemonServerNames,
  newDaemonCertificate,
  type DaemonCertificate,
  type DaemonCertificateOptions,
  type DaemonKeyCertificate,
  type DaemonServerNames,
} from './daemon-certificate.js';
export { newCaEndpoint, type CaEndpoint, newCaServer, type CaServer, type CaServerOptions } from './ca-server.js';
export { addRootCertPublisher, ROOT_CERT_CONFIG_MAP, ROOT_CERT_KEY, type RootCertPublisherOptions } from './root-cert-publisher.js';
// Federation (SPIFFE_BUNDLE_ENDPOINTS) and external signing (EXTERNAL_CA).
export type { CsrSigner } from './csr-signer.js';
export { csrRequestedNames, type RequestedName } from './csr-requested-names.js';
export { chainProblem, type ChainInput } from '../pki/index.js';
export {
  newTrustBundleSet,
  type RootBundleSource,
  type TrustBundleSet,
  type TrustBundleSetOptions,
  type TrustBundleSnapshot,
} from './trust-bundle-set.js';
export { parseSpiffeBundleEndpoints, type BundleEndpoint } from './spiffe-bundle-endpoints.js';
export { buildSpiffeBundle, parseSpiffeBundle, type BuildSpiffeBundleOptions, type SpiffeBundle } from './spiffe-bundle.js';
export {
  fetchBundleText,
  newBundleFetcher,
  type BundleFetchStatus,
  type BundleFetcher,
  type BundleFetcherOptions,
  type FetchBundleOptions,
} from './bundle-fetcher.js';
export {
  WORKLOAD_CSR_USAGES,
  newKubeRegistrationAuthority,
  type KubeRegistrationAuthority,
  type KubeRegistrationAuthorityOptions,
} from './kube-registration-authority.js';
export { DEFAULT_SIGNER_ROOT_FILE, newMeshSigner, type MeshSigner, type MeshSignerOptions } from './new-mesh-signer.js';
export { openSslCipherList, withCipherSuites } from './tls-cipher-suites.js';
export { LOCAL_CA_DIR, setupCaWithManager, type CaSecurity, type CaSetupOptions } from './setup.js';
