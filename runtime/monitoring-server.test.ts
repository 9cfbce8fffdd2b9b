import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { MeshError } from './errors.js';
import { newNopLogger } from './log/logger.js';
import { newMetrics } from './metrics.js';
import type { HttpServerRunnable } from './http-server.js';
import { newMonitoringServer } from './monitoring-server.js';

const BUILD_INFO = { version: '0.1.0', gitRevision: 'abc123', nodeVersion: process.version, buildStatus: 'Clean', gitTag: '0.1.0' };

function urlOf(server: HttpServerRunnable, path: string): string {
  const { host, port } = server.boundAddress();
  return `http://${host}:${port}${path}`;
}

describe('the monitoring server', () => {
  const metrics = newMetrics('pilot-discovery');
  const controller = new AbortController();
  const server = newMonitoringServer({
    address: '127.0.0.1:0',
    metrics,
    buildInfo: BUILD_INFO,
    log: newNopLogger(),
    extraRoutes: (app) => {
      app.get('/debug/ping', async () => ({ pong: true }));
    },
  });
  let running: Promise<void>;

  beforeAll(async () => {
    expect(() => server.boundAddress()).toThrow(MeshError);
    running = server.start(controller.signal);
    await server.waitForReady(AbortSignal.timeout(5000));
  });

  afterAll(async () => {
    controller.abort();
    await running;
  });

  test('is an httpServer runnable bound to a free loopback port', () => {
    expect(server.group).toBe('httpServer');
    expect(server.boundAddress().host).toBe('127.0.0.1');
    expect(server.boundAddress().port).toBeGreaterThan(0);
  });

  test('GET /metrics serves the registry in the Prometheus text format', async () => {
    metrics.counter('pilot_xds_pushes').inc({ type: 'eds' }, 4);
    const response = await fetch(urlOf(server, '/metrics'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(metrics.registry.contentType);
    const text = await response.text();
    expect(text).toContain('# TYPE pilot_xds_pushes counter\n');
    expect(text).toContain('pilot_xds_pushes{type="eds"} 4\n');
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter\n');
  });

  test('GET /version serves the build information as JSON', async () => {
    const response = await fetch(urlOf(server, '/version'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual(BUILD_INFO);
  });

  test('serves the extra routes on the same port', async () => {
    const response = await fetch(urlOf(server, '/debug/ping'));
    expect(await response.json()).toEqual({ pong: true });
  });

  test('answers 404 for other paths', async () => {
    expect((await fetch(urlOf(server, '/nothing'))).status).toBe(404);
  });
});

describe('the monitoring server lifecycle', () => {
  test('closes the port once the signal aborts', async () => {
    const controller = new AbortController();
    const server = newMonitoringServer({
      address: '127.0.0.1:0',
      metrics: newMetrics('pilot-agent'),
      buildInfo: BUILD_INFO,
      log: newNopLogger(),
    });
    const running = server.start(controller.signal);
    await server.waitForReady();
    const url = urlOf(server, '/version');
    expect((await fetch(url)).status).toBe(200);
    controller.abort();
    await running;
    expect(() => server.boundAddress()).toThrow(/not listening/);
    await expect(fetch(url)).rejects.toThrow();
  });

  test('fails start and readiness when the port is taken', async () => {
    const holder = new AbortController();
    const first = newMonitoringServer({
      address: '127.0.0.1:0',
      metrics: newMetrics('pilot-agent'),
      buildInfo: BUILD_INFO,
      log: newNopLogger(),
    });
    const running = first.start(holder.signal);
    try {
      await first.waitForReady();
      const second = newMonitoringServer({
        address: `127.0.0.1:${first.boundAddress().port}`,
        metrics: newMetrics('pilot-agent'),
        buildInfo: BUILD_INFO,
        log: newNopLogger(),
      });
      const ready = second.waitForReady();
      await expect(second.start(new AbortController().signal)).rejects.toMatchObject({ code: 'listen-failed' });
      await expect(ready).rejects.toThrow(/cannot listen on 127\.0\.0\.1:/);
    } finally {
      holder.abort();
      await running;
    }
  });

  test('does not listen when stopped before start, and readiness says so', async () => {
    const server = newMonitoringServer({
      address: '127.0.0.1:0',
      metrics: newMetrics('pilot-agent'),
      buildInfo: BUILD_INFO,
      log: newNopLogger(),
    });
    await server.start(AbortSignal.abort());
    await expect(server.waitForReady()).rejects.toMatchObject({ code: 'stopped-before-start' });
    expect(() => server.boundAddress()).toThrow(/not listening/);
  });

  test('waitForReady gives up when its own signal aborts', async () => {
    const server = newMonitoringServer({
      address: '127.0.0.1:0',
      metrics: newMetrics('pilot-agent'),
      buildInfo: BUILD_INFO,
      log: newNopLogger(),
    });
    const waiting = new AbortController();
    const ready = server.waitForReady(waiting.signal);
    waiting.abort(new Error('gave up'));
    await expect(ready).rejects.toThrow('gave up');
  });

  test('rejects a malformed address at construction', () => {
    expect(() => newMonitoringServer({ address: '15014', metrics: newMetrics('pilot-agent'), buildInfo: {}, log: newNopLogger() })).toThrow(
      /invalid listen address "15014"/,
    );
  });
});
