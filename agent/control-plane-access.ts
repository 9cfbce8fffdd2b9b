import { isIP } from 'node:net';
import { join } from 'node:path';
import { credentials, experimental, Metadata, type ChannelCredentials } from '@grpc/grpc-js';
import { errorMessage, UsageError, type Clock, type Logging, type MeshMetrics } from '../runtime/index.js';
import { AGENT_PATHS } from './agent-paths.js';
import type { ProxyConfig } from '../crds/mesh-config/index.js';
import type { ProxyIdentity } from './proxy/proxy-identity.js';
import { credentialFetcher } from './secrets/credential-fetcher.js';
import { newFileMountedCertificates } from './secrets/file-mounted-certificates.js';
import { newAgentTrustBundle, staticIdentity, type AgentTrustBundle } from './secrets/trust-bundle.js';
import {
  newWorkloadCertificates,
  provisionedCertificateFiles,
  type ProvisionedCertificate,
  type WorkloadCertificates,
  type WorkloadCertificatesOptions,
} from './secrets/workload-certificates.js';

/** How the agent reaches the control plane: its address, its credentials, and the workload certificates it gets there. */
export interface ControlPlaneAccess {
  readonly discoveryAddress: string;
  readonly caAddress: string;
  /** False with `controlPlaneAuthPolicy: NONE` (plain text to the daemon). */
  readonly secure: boolean;
  readonly xdsCredentials: ChannelCredentials;
  readonly xdsChannelOptions: Record<string, string>;
  /** The root file the data plane verifies the daemon with when it connects without the agent. */
  readonly xdsRootsPath: string;
  /** The bearer token and cluster of every xDS stream (the token read fresh each time). */
  xdsMetadata(): Promise<Metadata>;
  readonly certificates: WorkloadCertificates;
  /** The trust bundles to start before the first certificate request, and to stop. */
  readonly trust: readonly AgentTrustBundle[];
  /** The TLS name of an address: `localhost` for IP addresses (the daemon's certificate names it), else the host. */
  serverName(address: string): string;
}

/** A setting read at start that cannot be used is a usage error (exit 2), with the reader's message. */
export function asUsageError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError(errorMessage(error), { cause: error });
  }
}

function hostOf(address: string): string {
  return address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
}

/** How the settings say the agent reaches the control plane (`agent-settings.ts` maps them); '' where unset. */
export interface ControlPlaneAccessSettings {
  /** CA_ADDR; '' for the discovery address. */
  readonly caAddress: string;
  /** PROV_CERT: the folder of a provisioned certificate (VMs). */
  readonly provisionedCertDir: string;
  /** CA_ROOT_CA: the roots that verify the CA; '' for the provisioned or the mounted root file. */
  readonly caRootFile: string;
  /** XDS_ROOT_CA: the roots that verify the daemon; '' for the CA's. */
  readonly xdsRootFile: string;
  /** CREDENTIAL_FETCHER_TYPE; '' for the mounted token. */
  readonly credentialFetcherType: string;
  /** CREDENTIAL_IDENTITY_PROVIDER. */
  readonly credentialIdentityProvider: string;
  /** FILE_MOUNTED_CERTS: workload certificates come from mounted files, not the CA. */
  readonly fileMountedCerts: boolean;
  /** SECRET_TTL, SECRET_GRACE_PERIOD_RATIO, ECC_SIGNATURE_ALGORITHM and PKCS8_KEY. */
  readonly workloadCertificates: Pick<WorkloadCertificatesOptions, 'ttlMs' | 'graceRatio' | 'keyType' | 'pkcs8'>;
}

export interface ControlPlaneAccessOptions {
  readonly access: ControlPlaneAccessSettings;
  readonly identity: ProxyIdentity;
  readonly proxyConfig: ProxyConfig;
  /** OUTPUT_CERTS, or the proxyless application's certificate folder; '' for none. */
  readonly outputCerts: string;
  readonly clock: Clock;
  readonly logging: Logging;
  readonly metrics: MeshMetrics<'pilot-agent'>;
}

/**
 * The agent's credentials towards the daemon and its CA: the trust bundles (following the mounted
 * root file and the CA's answers), the token (or the provisioned certificate of PROV_CERT), and the
 * workload certificates (from the CA, or mounted files with FILE_MOUNTED_CERTS).
 */
export async function newControlPlaneAccess(options: ControlPlaneAccessOptions): Promise<ControlPlaneAccess> {
  const { access, identity, clock, logging } = options;
  const discoveryAddress = options.proxyConfig.discoveryAddress ?? 'meshd.mesh-system.svc:15012';
  const caAddress = access.caAddress || discoveryAddress;
  // PROV_CERT (a VM): the provisioned certificate authenticates to the CA and the daemon, its folder's root verifies them.
  const provisionedDir = access.provisionedCertDir;
  const provisioned = provisionedDir !== '' ? provisionedCertificateFiles(provisionedDir) : undefined;
  let provisionedAtStart: ProvisionedCertificate | undefined;
  try {
    provisionedAtStart = await provisioned?.();
  } catch (error) {
    throw new UsageError(errorMessage(error), { cause: error });
  }
  const rootsPath = access.caRootFile || (provisionedDir !== '' ? join(provisionedDir, 'root-cert.pem') : AGENT_PATHS.meshRoot);
  const xdsRootsPath = access.xdsRootFile || rootsPath;
  // The roots of the agent's own connections follow the mounted file and the CA's answers, so
  // that reconnections after a root rotation verify the daemon's new certificate.
  const caTrust = newAgentTrustBundle({ file: rootsPath, clock, log: logging.scope('cache') });
  const xdsTrust = xdsRootsPath === rootsPath ? caTrust : newAgentTrustBundle({ file: xdsRootsPath, clock, log: logging.scope('cache') });
  const token = asUsageError(() =>
    credentialFetcher({
      type: access.credentialFetcherType,
      identityProvider: access.credentialIdentityProvider,
      audience: new URL(identity.spiffeId).hostname,
      tokenPath: AGENT_PATHS.token,
    }),
  );
  const serverName = (address: string): string => (isIP(hostOf(address)) ? 'localhost' : hostOf(address));
  const certificates = access.fileMountedCerts
    ? newFileMountedCertificates({ dir: AGENT_PATHS.mountedCerts, clock, log: logging.scope('cache') })
    : newWorkloadCertificates({
        caAddress,
        caTrust,
        token,
        ...(provisioned ? { provisionedCertificate: provisioned } : {}),
        spiffeId: identity.spiffeId,
        ...access.workloadCertificates,
        ...(options.outputCerts ? { outputDir: options.outputCerts } : {}),
        clock,
        log: logging.scope('cache'),
        metrics: options.metrics,
        caServerName: serverName(caAddress),
        ...(identity.clusterId ? { clusterId: identity.clusterId } : {}),
      });
  const secure = options.proxyConfig.controlPlaneAuthPolicy !== 'NONE';
  return {
    discoveryAddress,
    caAddress,
    secure,
    xdsCredentials: secure
      ? experimental.createCertificateProviderChannelCredentials(xdsTrust, provisionedAtStart ? staticIdentity(provisionedAtStart) : null)
      : credentials.createInsecure(),
    xdsChannelOptions: secure ? { 'grpc.ssl_target_name_override': serverName(discoveryAddress) } : {},
    xdsRootsPath,
    async xdsMetadata() {
      const metadata = new Metadata();
      // With a provisioned certificate the TLS client certificate is the credential; a token is added when there is one.
      const bearer = provisioned ? await token().catch(() => undefined) : await token();
      if (bearer) metadata.set('authorization', `Bearer ${bearer}`);
      return metadata;
    },
    certificates,
    trust: xdsTrust === caTrust ? [caTrust] : [caTrust, xdsTrust],
    serverName,
  };
}
