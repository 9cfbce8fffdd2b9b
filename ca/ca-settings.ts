/**
 * The CA's one reader of the daemon's settings: each function maps the settings one part of the
 * CA reads into that part's own options, and refuses a bad value naming its setting.
 */
import { SettingsError, type Settings } from '../runtime/index.js';
import type { CaAuthenticationSettings } from './authn/ca-authenticators.js';
import { parseJwtRule, type JwtRule } from './authn/jwt-authenticator.js';
import type { JwtPolicy } from './authn/kube-token-authenticator.js';
import type { MeshCaSettings } from './authority/new-mesh-ca.js';
import type { ExternalSigning } from './authority/new-mesh-signer.js';
import { CaError } from './ca-error.js';
import type { DaemonServingSettings } from './server/ca-server.js';
import { parseSpiffeBundleEndpoints, type BundleEndpoint } from './trust/spiffe-bundle-endpoints.js';

type DaemonSettings = Settings<'pilot-discovery'>;

export function meshCaSettingsFromSettings(settings: DaemonSettings): MeshCaSettings {
  return {
    enabled: settings.get('ENABLE_CA_SERVER'),
    rootCaDir: settings.get('ROOT_CA_DIR'),
    defaultWorkloadCertTtlMs: settings.get('DEFAULT_WORKLOAD_CERT_TTL'),
    maxWorkloadCertTtlMs: settings.get('MAX_WORKLOAD_CERT_TTL'),
    selfSignedRoot: {
      rsaKeySize: settings.get('CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE'),
      certTtlMs: settings.get('CASERVER_SELF_SIGNED_CA_CERT_TTL'),
      checkIntervalMs: settings.get('CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL'),
      gracePeriodPercentile: settings.get('CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE'),
      enableJitter: settings.get('CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR'),
    },
  };
}

const SIGNER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[^/\s]+(\/[^/\s]+)*$/;

/**
 * EXTERNAL_CA and ORCH_SIGNER: undefined when our own CA signs. Throws a SettingsError for
 * MESHD_RA_MESH_API (not supported) and for a malformed ORCH_SIGNER with MESHD_RA_ORCH_API.
 */
export function externalSigningFromSettings(settings: DaemonSettings): ExternalSigning | undefined {
  const externalCa = settings.get('EXTERNAL_CA');
  if (externalCa === 'MESHD_RA_MESH_API') {
    throw new SettingsError([{ name: 'EXTERNAL_CA', value: externalCa, expected: 'empty or MESHD_RA_ORCH_API (MESHD_RA_MESH_API is not supported)' }]);
  }
  if (externalCa !== 'MESHD_RA_ORCH_API') return undefined;
  const signerName = settings.get('ORCH_SIGNER');
  if (!SIGNER_NAME.test(signerName)) {
    throw new SettingsError([
      { name: 'ORCH_SIGNER', value: signerName, expected: 'a signer name such as example.com/mesh-signer when EXTERNAL_CA=MESHD_RA_ORCH_API' },
    ]);
  }
  return { signerName };
}

/** Throws a CaError for a bad JWT_RULE, or TOKEN_ISSUER without AUDIENCE. */
export function caAuthenticationFromSettings(settings: DaemonSettings): CaAuthenticationSettings {
  const jwtRule = jwtRuleFromSettings(settings);
  return {
    serviceAccountTokens: {
      audiences: commaList(settings.get('TOKEN_AUDIENCES')),
      // The registry admits only the two policies.
      jwtPolicy: settings.get('JWT_POLICY') as JwtPolicy,
      require3pToken: settings.get('REQUIRE_3P_TOKEN'),
    },
    ...(jwtRule ? { jwtRule } : {}),
  };
}

/** The OIDC rule of the daemon's settings: JWT_RULE, else TOKEN_ISSUER with AUDIENCE; undefined when neither is set. */
export function jwtRuleFromSettings(settings: DaemonSettings): JwtRule | undefined {
  const rule = settings.get('JWT_RULE');
  if (rule !== '') return parseJwtRule(rule);
  const issuer = settings.get('TOKEN_ISSUER');
  if (issuer === '') return undefined;
  const audiences = commaList(settings.get('AUDIENCE'));
  if (audiences.length === 0) throw new CaError('ca-material-invalid', 'TOKEN_ISSUER needs AUDIENCE');
  return { issuer, audiences };
}

export function daemonServingFromSettings(settings: DaemonSettings): DaemonServingSettings {
  return {
    namespace: settings.get('POD_NAMESPACE'),
    customHosts: commaList(settings.get('MESHD_CUSTOM_HOST')),
    certTtlMs: settings.get('DEFAULT_WORKLOAD_CERT_TTL'),
  };
}

/** SPIFFE_BUNDLE_ENDPOINTS; throws a SettingsError naming it for a bad tuple. */
export function spiffeBundleEndpointsFromSettings(settings: DaemonSettings): BundleEndpoint[] {
  return parseSpiffeBundleEndpoints(settings.get('SPIFFE_BUNDLE_ENDPOINTS'));
}

/** A comma-separated setting: its items, trimmed, without empty ones. */
function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
