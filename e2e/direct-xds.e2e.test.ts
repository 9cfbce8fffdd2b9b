import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { startLocalMesh, type LocalMesh } from './local-mesh/local-mesh.js';

// PROXY_XDS_VIA_AGENT=false: each embedded data plane opens its ADS stream straight to the
// daemon's TLS port and authenticates with the workload certificate SDS gives it (no agent
// socket, no token on the stream), and traffic flows as through the agent.
// Pod addresses of their own: the seed scenarios run the default block's meshes beside this file.
const ADDRESS_BLOCK = 52;
let mesh: LocalMesh;
let workDir: string;

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'direct-xds-'));
  mesh = await startLocalMesh({ workDir, addressBlock: ADDRESS_BLOCK, agentEnv: { PROXY_XDS_VIA_AGENT: 'false' } });
  await mesh.waitReady();
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  rmSync(workDir, { recursive: true, force: true });
});

describe('data planes connected straight to the daemon', () => {
  test('take their config over mutual TLS and carry mesh traffic', async () => {
    const { body: stdout } = await curl(['-x', mesh.proxyOf('foo'), 'http://httpbin.bar:8000/headers']);
    expect(stdout).toContain('By=spiffe://cluster.local/ns/bar/sa/httpbin');
    expect(stdout).toContain('URI=spiffe://cluster.local/ns/foo/sa/sleep');
    expect(existsSync(join(workDir, 'pods/foo-sleep/etc/mesh/proxy/XDS'))).toBe(false);
    const syncz = (await (await fetch(`http://127.0.0.1:${mesh.daemon.httpPort}/debug/syncz`)).json()) as { proxy: string }[];
    expect(syncz.map((entry) => entry.proxy)).toEqual(expect.arrayContaining([expect.stringContaining('sleep')]));
  });
});
