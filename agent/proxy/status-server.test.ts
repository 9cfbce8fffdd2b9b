import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newMetrics } from '../../controllers/runtime/index.js';
import { newStatusServer } from './status-server.js';

let reason: string | undefined = 'no workload certificate yet';
const server = newStatusServer({ notReady: () => reason, metrics: newMetrics('pilot-agent') });
let base: string;

beforeAll(async () => {
  base = `http://127.0.0.1:${await server.listen('127.0.0.1', 0)}`;
});
afterAll(() => server.close());

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
});
