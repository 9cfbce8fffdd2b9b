import { describe, expect, test } from '@jest/globals';
import { CaError } from './ca-error.js';
import { loadSettings, SettingsError } from '../runtime/index.js';
import {
  caAuthenticationFromSettings,
  daemonServingFromSettings,
  externalSigningFromSettings,
  meshCaSettingsFromSettings,
  spiffeBundleEndpointsFromSettings,
} from './ca-settings.js';

const HOUR = 3_600_000;
const daemon = (env: Record<string, string>) => loadSettings('pilot-discovery', env);

describe('the CA settings', () => {
  test('the CA: enabled, the plugged folder, the workload certificate TTLs and the self-signed root', () => {
    const settings = daemon({
      ENABLE_CA_SERVER: 'false',
      ROOT_CA_DIR: '/etc/cacerts',
      MAX_WORKLOAD_CERT_TTL: '48h',
      CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '0s',
      CASERVER_ENABLE_JITTER_FOR_ROOT_CERT_ROTATOR: 'false',
    });
    expect(meshCaSettingsFromSettings(settings)).toEqual({
      enabled: false,
      rootCaDir: '/etc/cacerts',
      defaultWorkloadCertTtlMs: 24 * HOUR,
      maxWorkloadCertTtlMs: 48 * HOUR,
      selfSignedRoot: { rsaKeySize: 2048, certTtlMs: 87600 * HOUR, checkIntervalMs: 0, gracePeriodPercentile: 20, enableJitter: false },
    });
  });

  test('external signing: the ORCH_SIGNER of MESHD_RA_ORCH_API, none without EXTERNAL_CA', () => {
    expect(externalSigningFromSettings(daemon({ EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'example.com/mesh-signer' }))).toEqual({
      signerName: 'example.com/mesh-signer',
    });
    expect(externalSigningFromSettings(daemon({ ORCH_SIGNER: 'example.com/mesh-signer' }))).toBeUndefined();
  });

  test.each([
    [{ EXTERNAL_CA: 'MESHD_RA_MESH_API' }, 'invalid value "MESHD_RA_MESH_API" for EXTERNAL_CA'],
    [{ EXTERNAL_CA: 'MESHD_RA_ORCH_API', ORCH_SIGNER: 'mesh-signer' }, 'invalid value "mesh-signer" for ORCH_SIGNER'],
  ])('%j is refused naming the setting', (env, message) => {
    const read = (): unknown => externalSigningFromSettings(daemon(env));
    expect(read).toThrow(SettingsError);
    expect(read).toThrow(message);
  });

  test('authentication: the service account token review and the OIDC issuer', () => {
    const settings = daemon({
      TOKEN_AUDIENCES: 'mesh-ca, other,',
      JWT_POLICY: 'first-party-jwt',
      REQUIRE_3P_TOKEN: 'true',
      TOKEN_ISSUER: 'https://i.example',
      AUDIENCE: 'x',
    });
    expect(caAuthenticationFromSettings(settings)).toEqual({
      serviceAccountTokens: { audiences: ['mesh-ca', 'other'], jwtPolicy: 'first-party-jwt', require3pToken: true },
      jwtRule: { issuer: 'https://i.example', audiences: ['x'] },
    });
    expect(caAuthenticationFromSettings(daemon({})).jwtRule).toBeUndefined();
    expect(() => caAuthenticationFromSettings(daemon({ JWT_RULE: '{' }))).toThrow(CaError);
  });

  test('the serving certificate: namespace, MESHD_CUSTOM_HOST and its lifetime', () => {
    expect(
      daemonServingFromSettings(daemon({ POD_NAMESPACE: 'mesh-prod', MESHD_CUSTOM_HOST: ' meshd.example.com,,10.1.2.3', DEFAULT_WORKLOAD_CERT_TTL: '12h' })),
    ).toEqual({
      namespace: 'mesh-prod',
      customHosts: ['meshd.example.com', '10.1.2.3'],
      certTtlMs: 12 * HOUR,
    });
  });

  test('SPIFFE bundle endpoints: parsed, and a plain HTTP one refused naming the setting', () => {
    expect(spiffeBundleEndpointsFromSettings(daemon({ SPIFFE_BUNDLE_ENDPOINTS: 'other.example|bundle.other.example/bundle' }))).toEqual([
      { trustDomain: 'other.example', url: 'https://bundle.other.example/bundle' },
    ]);
    expect(() => spiffeBundleEndpointsFromSettings(daemon({ SPIFFE_BUNDLE_ENDPOINTS: 'other.example|http://b.example' }))).toThrow(
      /for SPIFFE_BUNDLE_ENDPOINTS/,
    );
  });
});
