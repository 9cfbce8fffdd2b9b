/**
 * The agent's one reader of its settings: `newAgent` maps them here, once, into its parts' own
 * options and the switches it reads itself.
 */
import type { Settings } from '../runtime/index.js';
import type { ControlPlaneAccessSettings } from './control-plane-access.js';
import type { PodSettings } from './proxy/proxy-identity.js';

/** What the settings tell `newAgent`; '' where a text setting is unset. */
export interface AgentSettings {
  readonly pod: PodSettings;
  readonly access: ControlPlaneAccessSettings;
  /** PROXY_CONFIG: a ProxyConfig (YAML or JSON) over the mesh config's `defaultConfig`. */
  readonly proxyConfig: string;
  /** PROXY_XDS_VIA_AGENT: the data plane's xDS goes through the agent's proxy. */
  readonly xdsViaAgent: boolean;
  /** PROXY_XDS_DEBUG_VIA_AGENT: the agent's debug tap serves the daemon's debug views. */
  readonly debugViaAgent: boolean;
  /** OUTPUT_CERTS: a folder the workload certificates are also written to. */
  readonly outputCerts: string;
  /** MESH_ORCH_APP_PROBERS: the application probes (JSON) served on the status port. */
  readonly appProbers: string;
  /** PROXY_STATUS_PORT. */
  readonly statusPort: number;
  readonly bootstrap: BootstrapSettings;
}

/** What the settings add to the data plane's bootstrap. */
export interface BootstrapSettings {
  /** MESH_DELTA_XDS. */
  readonly deltaXds: boolean;
  /** PROXY_METRICS_PORT. */
  readonly metricsPort: number;
  /** MESH_BOOTSTRAP_OVERRIDE: a file merged over the generated bootstrap. */
  readonly overrideFile: string;
}

export function agentSettingsFromSettings(settings: Settings<'pilot-agent'>): AgentSettings {
  return {
    pod: {
      name: settings.get('POD_NAME'),
      namespace: settings.get('POD_NAMESPACE'),
      instanceIp: settings.get('INSTANCE_IP'),
      serviceAccount: settings.get('SERVICE_ACCOUNT'),
      trustDomain: settings.get('TRUST_DOMAIN'),
      clusterId: settings.get('MESH_META_CLUSTER_ID'),
      dnsCapture: settings.get('MESH_META_DNS_CAPTURE'),
      metaEnv: settings.prefixed('MESH_META_'),
      metaJsonEnv: settings.prefixed('MESH_METAJSON_'),
    },
    access: {
      caAddress: settings.get('CA_ADDR'),
      provisionedCertDir: settings.get('PROV_CERT'),
      caRootFile: settings.get('CA_ROOT_CA'),
      xdsRootFile: settings.get('XDS_ROOT_CA'),
      credentialFetcherType: settings.get('CREDENTIAL_FETCHER_TYPE'),
      credentialIdentityProvider: settings.get('CREDENTIAL_IDENTITY_PROVIDER'),
      fileMountedCerts: settings.get('FILE_MOUNTED_CERTS'),
      workloadCertificates: {
        ttlMs: settings.get('SECRET_TTL'),
        graceRatio: settings.get('SECRET_GRACE_PERIOD_RATIO'),
        // Any other algorithm, or none, means RSA keys.
        keyType: settings.get('ECC_SIGNATURE_ALGORITHM').toUpperCase() === 'ECDSA' ? 'ecdsa' : 'rsa',
        pkcs8: settings.get('PKCS8_KEY'),
      },
    },
    proxyConfig: settings.get('PROXY_CONFIG'),
    xdsViaAgent: settings.get('PROXY_XDS_VIA_AGENT'),
    debugViaAgent: settings.get('PROXY_XDS_DEBUG_VIA_AGENT'),
    outputCerts: settings.get('OUTPUT_CERTS'),
    appProbers: settings.get('MESH_ORCH_APP_PROBERS'),
    statusPort: settings.get('PROXY_STATUS_PORT'),
    bootstrap: {
      deltaXds: settings.get('MESH_DELTA_XDS'),
      metricsPort: settings.get('PROXY_METRICS_PORT'),
      overrideFile: settings.get('MESH_BOOTSTRAP_OVERRIDE'),
    },
  };
}
