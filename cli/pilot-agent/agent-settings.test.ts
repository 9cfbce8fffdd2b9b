import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runBin } from '../../testing/run-bin.js';

// Agent settings with a bad value stop `pilot-agent proxy` before it starts anything, as a usage
// error (exit 2) naming the setting.
const work = mkdtempSync(join(tmpdir(), 'agent-settings-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const BASE = {
  INSTANCE_IP: '127.0.95.1',
  POD_NAMESPACE: 'foo',
  SERVICE_ACCOUNT: 'sleep',
  PROXY_CONFIG: JSON.stringify({ discoveryAddress: '127.0.0.1:1', proxyMetadata: { POD_NAME: 'sleep-1' } }),
};

describe('pilot-agent proxy refuses bad settings by name', () => {
  test.each([
    ['an unknown credential fetcher', { CREDENTIAL_FETCHER_TYPE: 'AWS' }, 'CREDENTIAL_FETCHER_TYPE must be empty or one of GoogleComputeEngine, got "AWS"'],
    [
      'an identity provider the fetcher does not serve',
      { CREDENTIAL_FETCHER_TYPE: 'GoogleComputeEngine', CREDENTIAL_IDENTITY_PROVIDER: 'Azure' },
      'CREDENTIAL_IDENTITY_PROVIDER must be one of GoogleComputeEngine',
    ],
    ['a provisioned-certificate folder without its files', { PROV_CERT: join(work, 'none') }, `PROV_CERT ${join(work, 'none')}: cannot read key.pem`],
    ['a bad app prober', { MESH_ORCH_APP_PROBERS: '{not json' }, 'MESH_ORCH_APP_PROBERS'],
    // The bundled agent loads zod's tree-shakable API alone: its messages must still be words, not "Invalid input".
    [
      'a ProxyConfig field of the wrong type',
      { PROXY_CONFIG: JSON.stringify({ statusPort: 'x' }) },
      'PROXY_CONFIG: statusPort: Invalid input: expected number, received string',
    ],
    [
      'a port out of range',
      { PROXY_CONFIG: JSON.stringify({ proxyAdminPort: 70000 }) },
      'PROXY_CONFIG: proxyAdminPort: Too big: expected number to be <=65535',
    ],
    ['a bad duration', { PROXY_CONFIG: 'drainDuration: 5x' }, 'PROXY_CONFIG: drainDuration: expected a duration such as 1s, 0.5s, 100ms or 1h30m, got "5x"'],
    ['an unknown ProxyConfig field', { PROXY_CONFIG: JSON.stringify({ discoveryAdress: 'x' }) }, 'PROXY_CONFIG: (root): Unrecognized key: "discoveryAdress"'],
  ])('%s', async (_name, env, message) => {
    const result = await runBin('pilot-agent', ['proxy', 'sidecar'], { env: { ...BASE, ...env }, cwd: work });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
