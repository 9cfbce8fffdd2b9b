import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newMetrics } from '../../runtime/index.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAppProbers } from './app-probers.js';
import { newStatusServer, type StatusServerOptions } from './status-server.js';

let reason: string | undefined = 'no workload certificate yet';
let app: Server;
let appHealthy = true;
let server: ReturnType<typeof newStatusServer>;
let base: string;

beforeAll(async () => {
  app = createServer((req, res) => {
    res.writeHead(req.url === '/healthz' && appHealthy ? 200 : 500);
    res.end();
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  const appPort = (app.address() as AddressInfo).port;
  const options: StatusServerOptions = {
    notReady: () => reason,
    metrics: newMetrics('pilot-agent'),
    appProbes: parseAppProbers(
      JSON.stringify({
        '/app-health/httpbin/livez': { httpGet: { path: '/healthz', port: appPort } },
        '/app-health/httpbin/readyz': { tcpSocket: { port: appPort } },
      }),
    ),
    appHost: '127.0.0.1',
  };
  server = newStatusServer(options);
  base = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});
afterAll(async () => {
  await server.close();
  app.close();
});

describe('the agent status port', () => {
  test('readiness follows the certificate and the first accepted config', async () => {
    let response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('no workload certificate');
    reason = 'listeners and clusters not accepted yet';
    expect((await fetch(`${base}/healthz/ready`)).status).toBe(503);
    reason = undefined;
    response = await fetch(`${base}/healthz/ready`);
    expect(response.status).toBe(200);
  });

  test('the agent metrics in Prometheus form', async () => {
    const text = await (await fetch(`${base}/stats/prometheus`)).text();
    expect(text).toContain('# TYPE');
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
  });

  test('MESH_ORCH_APP_PROBERS: the app probes are answered through the status port', async () => {
    expect((await fetch(`${base}/app-health/httpbin/livez`)).status).toBe(200);
    expect((await fetch(`${base}/app-health/httpbin/readyz`)).status).toBe(200);
    appHealthy = false;
    expect((await fetch(`${base}/app-health/httpbin/livez`)).status).toBe(500);
    expect(() => parseAppProbers('{"/elsewhere":{"httpGet":{"port":1}}}')).toThrow('must start with /app-health/');
    expect(() => parseAppProbers('not json')).toThrow('not JSON');
  });
});
