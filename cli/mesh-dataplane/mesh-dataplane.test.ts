import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { collect, PROJECT_ROOT } from '../../testing/run-bin.js';
import { freePort, waitFor } from '../../testing/wait-for.js';

// The embedded data plane's program, as the agent starts it in place of Envoy.
const PROGRAM = join(PROJECT_ROOT, 'bin/mesh-dataplane.js');
let dir: string;
let bootstrapPath: string;
let adminPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mesh-dataplane-'));
  const [xdsPort, port] = await Promise.all([freePort(), freePort()]);
  adminPort = port;
  bootstrapPath = join(dir, 'envoy-rev.json');
  writeFileSync(
    bootstrapPath,
    JSON.stringify({
      node: { id: 'sidecar~127.0.94.1~a.foo~foo.svc.cluster.local', metadata: { INSTANCE_IPS: '127.0.94.1' } },
      admin: { address: { socket_address: { address: '127.0.94.1', port_value: adminPort } } },
      dynamic_resources: { ads_config: { api_type: 'GRPC', grpc_services: [{ envoy_grpc: { cluster_name: 'xds-grpc' } }] } },
      static_resources: {
        clusters: [
          {
            name: 'xds-grpc',
            load_assignment: { endpoints: [{ lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: xdsPort } } } }] }] },
          },
        ],
      },
    }),
  );
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('mesh-dataplane', () => {
  test('serves its admin API, unready without config, and exits when the agent that started it is gone', async () => {
    const child = spawn(process.execPath, [PROGRAM, '-c', bootstrapPath, '-l', 'warning'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const exit = collect(child, 15_000);
    await waitFor(async () => (await fetch(`http://127.0.94.1:${adminPort}/ready`).catch(() => undefined))?.status === 503, {
      timeoutMs: 10_000,
      description: 'the admin API',
    });
    const stats = await (await fetch(`http://127.0.94.1:${adminPort}/stats`)).text();
    expect(stats).not.toContain('listener_manager.lds.update_success');
    // The agent's end closes the pipe it holds to the data plane's stdin.
    child.stdin.end();
    expect(await exit).toMatchObject({ code: 0 });
  });

  test('a bad level or a missing bootstrap is a usage error naming the flag', async () => {
    const badLevel = await collect(spawn(process.execPath, [PROGRAM, '-c', bootstrapPath, '-l', 'loud'], { stdio: ['ignore', 'pipe', 'pipe'] }), 10_000);
    expect(badLevel).toMatchObject({ code: 2, stderr: expect.stringContaining('--log-level must be one of') });
    const missing = await collect(spawn(process.execPath, [PROGRAM, '-c', join(dir, 'none.json')], { stdio: ['ignore', 'pipe', 'pipe'] }), 10_000);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining(`--config-path ${join(dir, 'none.json')}`) });
  });
});
