import { describe, expect, test } from '@jest/globals';
import { loadSettings } from '../runtime/index.js';
import { agentSettingsFromSettings } from './agent-settings.js';

const HOUR = 3_600_000;
const agent = (env: Record<string, string>) => loadSettings('pilot-agent', env);

describe('the agent settings', () => {
  test('the pod, as injection describes it', () => {
    const { pod } = agentSettingsFromSettings(
      agent({ POD_NAME: 'cart-6f9c', POD_NAMESPACE: 'shop', INSTANCE_IP: '10.0.0.7', SERVICE_ACCOUNT: 'cart', MESH_META_DNS_CAPTURE: 'true' }),
    );
    expect(pod).toEqual({
      name: 'cart-6f9c',
      namespace: 'shop',
      instanceIp: '10.0.0.7',
      serviceAccount: 'cart',
      trustDomain: 'cluster.local',
      clusterId: '',
      dnsCapture: true,
      metaEnv: { DNS_CAPTURE: 'true' },
      metaJsonEnv: {},
    });
  });

  test('the way to the control plane and the workload certificates', () => {
    const { access } = agentSettingsFromSettings(
      agent({ CA_ADDR: 'ca.example:15012', FILE_MOUNTED_CERTS: 'true', SECRET_TTL: '12h', ECC_SIGNATURE_ALGORITHM: 'ecdsa', PKCS8_KEY: 'true' }),
    );
    expect(access).toMatchObject({ caAddress: 'ca.example:15012', provisionedCertDir: '', fileMountedCerts: true });
    expect(access.workloadCertificates).toEqual({ ttlMs: 12 * HOUR, graceRatio: 0.5, keyType: 'ecdsa', pkcs8: true });
    expect(agentSettingsFromSettings(agent({})).access.workloadCertificates.keyType).toBe('rsa');
  });

  test("the agent's own switches and the bootstrap's", () => {
    const settings = agentSettingsFromSettings(
      agent({ PROXY_XDS_VIA_AGENT: 'false', PROXY_STATUS_PORT: '16021', MESH_DELTA_XDS: 'true', MESH_BOOTSTRAP_OVERRIDE: '/etc/override.json' }),
    );
    expect(settings).toMatchObject({ xdsViaAgent: false, debugViaAgent: true, statusPort: 16021, outputCerts: '' });
    expect(settings.bootstrap).toEqual({ deltaXds: true, metricsPort: 15090, overrideFile: '/etc/override.json' });
  });

  test('a bad value is refused naming its setting', () => {
    expect(() => agentSettingsFromSettings(agent({ SECRET_GRACE_PERIOD_RATIO: '1.5' }))).toThrow(/for SECRET_GRACE_PERIOD_RATIO/);
  });
});
