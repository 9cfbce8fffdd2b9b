// The certificate authority: CSR authenticators (authn/), the root of trust and signing,
// self-signed or plugged, with root rotation and the Kubernetes registration authority
// (authority/), where the CA material is kept (store/), X.509 and CSR handling (x509/), the gRPC
// service and the daemon's serving certificate (server/), SPIFFE bundles and root publication
// (trust/), and `setupCaWithManager` (or, with the CA disabled, `setupCaDisabledWithManager`:
// the certificate files and the authenticators without a CA). Errors are data (CaError), mapped to gRPC status at the
// edge. Imports neither xds/ (only xds/envoy/) nor agent/.
export { CaError, type CaErrorCode } from './ca-error.js';
export { CA_FILES, SELF_SIGNED_SECRET_NAME, type CaStore, type StoredCa } from './store/ca-store.js';
export { newFolderCaStore } from './store/folder-ca-store.js';
export { newKubeSecretCaStore, type KubeSecretCaStoreOptions } from './store/kube-secret-ca-store.js';
export { readPluggedCa } from './authority/plugged-ca.js';
export { loadKeyCertBundle, type CaMaterial, type KeyCertBundle } from './authority/key-cert-bundle.js';
export { parseCertificate, parseCertificatesPem, type CertificateInfo } from './x509/certificate-info.js';
export { newCaSigner, type CaKeyType, type CaSigner } from './authority/signer.js';
export {
  buildSelfSignedRoot,
  generateCaKey,
  newSelfSignedMaterial,
  rotateSelfSignedMaterial,
  type CaKeyOptions,
  type RootCertOptions,
  type RotateOptions,
  type SelfSignedOptions,
} from './authority/self-signed-root.js';
export { parseAndVerifyCsr, verifyCsrDer, type VerifiedCsr } from './x509/csr.js';
export { buildCsr, type CsrOptions } from './x509/csr-builder.js';
export type { SubjectAltNames } from './authority/certificate-builder.js';
export {
  newCertificateAuthority,
  recordExpiry,
  type CertificateAuthority,
  type CertificateAuthorityOptions,
  type IssueRequest,
  type IssuedCertificate,
} from './authority/certificate-authority.js';
export { newRootRotator, type RootCheckResult, type RootRotator, type RootRotatorOptions } from './authority/root-rotator.js';
export { newMeshCa, type MeshCa, type MeshCaOptions } from './authority/new-mesh-ca.js';
export { parseServiceAccountUser, parseSpiffeId, spiffeId, type WorkloadIdentity } from './trust/spiffe.js';
export { decodePemBlocks, encodePem, type PemBlock } from '../pki/index.js';
// The certificate service: authenticators, the transport-free core, gRPC.
export type { AuthContext, Authenticator, Caller } from './authn/authenticator.js';
export { newKubeTokenAuthenticator, hasAudienceClaim, type JwtPolicy, type KubeTokenAuthenticatorOptions } from './authn/kube-token-authenticator.js';
export { newJwtAuthenticator, parseJwtRule, type JwtAuthenticatorOptions, type JwtRule } from './authn/jwt-authenticator.js';
export { jwtRuleFromSettings } from './ca-settings.js';
export { newClientCertAuthenticator, type ClientCertAuthenticatorOptions } from './authn/client-cert-authenticator.js';
export { newCaAuthenticators, type CaAuthenticatorsOptions } from './authn/ca-authenticators.js';
export { newCertificateService, type CertificateService, type CertificateServiceOptions, type CreateCertificateInput } from './server/certificate-service.js';
export {
  MESH_CERTIFICATE_SERVICE,
  loadMeshCertificateService,
  meshCertificateProtoPath,
  meshCertificateServiceDefinition,
  newMeshCertificateClient,
  type MeshCertificateClient,
  type MeshCertificateRequest,
  type MeshCertificateResponse,
} from './server/mesh-certificate-proto.js';
export { newCaGrpcService } from './server/grpc-service.js';
export {
  daemonServerNames,
  newDaemonCertificate,
  type DaemonCertificate,
  type DaemonCertificateOptions,
  type DaemonKeyCertificate,
  type DaemonServerNames,
} from './server/daemon-certificate.js';
export {
  newCaEndpoint,
  type CaEndpoint,
  newCaServer,
  type CaServer,
  type CaServerOptions,
  fileServingProviders,
  servingCredentials,
  type ServingProviders,
  type TlsFiles,
} from './server/ca-server.js';
export { addRootCertPublisher, ROOT_CERT_CONFIG_MAP, ROOT_CERT_KEY, type RootCertPublisherOptions } from './trust/root-cert-publisher.js';
// Federation (SPIFFE_BUNDLE_ENDPOINTS) and external signing (EXTERNAL_CA).
export type { CsrSigner } from './authority/csr-signer.js';
export { newSigningPool, type SigningPool, type SigningPoolOptions } from './authority/signing-pool.js';
export { csrRequestedNames, type RequestedName } from './x509/csr-requested-names.js';
export { chainProblem, type ChainInput } from '../pki/index.js';
export {
  newTrustBundleSet,
  type RootBundleSource,
  type TrustBundleSet,
  type TrustBundleSetOptions,
  type TrustBundleSnapshot,
} from './trust/trust-bundle-set.js';
export { parseSpiffeBundleEndpoints, type BundleEndpoint } from './trust/spiffe-bundle-endpoints.js';
export { buildSpiffeBundle, parseSpiffeBundle, type BuildSpiffeBundleOptions, type SpiffeBundle } from './trust/spiffe-bundle.js';
export {
  fetchBundleText,
  newBundleFetcher,
  type BundleFetchStatus,
  type BundleFetcher,
  type BundleFetcherOptions,
  type FetchBundleOptions,
} from './trust/bundle-fetcher.js';
export {
  WORKLOAD_CSR_USAGES,
  newKubeRegistrationAuthority,
  type KubeRegistrationAuthority,
  type KubeRegistrationAuthorityOptions,
} from './authority/kube-registration-authority.js';
export { DEFAULT_SIGNER_ROOT_FILE, newMeshSigner, type MeshSigner, type MeshSignerOptions } from './authority/new-mesh-signer.js';
export { openSslCipherList, withCipherSuites } from './server/tls-cipher-suites.js';
export { LOCAL_CA_DIR, setupCaWithManager, type CaSecurity, type CaSetupOptions } from './setup.js';
export { setupCaDisabledWithManager, type CaDisabledSecurity, type CaDisabledSetupOptions, type FileServing } from './ca-disabled-setup.js';
export { newFileRoots, type FileRoots, type FileRootsOptions } from './trust/file-roots.js';
