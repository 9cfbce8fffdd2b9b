import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { fastify } from 'fastify';
import { MeshError } from './errors.js';
import { healthHttpHandler, newHealthChecks, type HealthChecks, type HealthFailure } from './health.js';
import type { HealthCheck } from './runnable.js';

interface Case {
  name: string;
  checks: Record<string, HealthCheck>;
  healthy: boolean;
  failures: HealthFailure[];
}

describe('health checks', () => {
  test.each<Case>([
    { name: 'no checks is healthy', checks: {}, healthy: true, failures: [] },
    { name: 'sync and async passes', checks: { a: () => undefined, b: async () => undefined }, healthy: true, failures: [] },
    {
      name: 'every failure is listed with its reason',
      checks: {
        a: () => undefined,
        b: () => {
          throw new Error('cache not synced');
        },
        c: async () => Promise.reject(new Error('not leader')),
        d: () => Promise.reject('plain string'),
      },
      healthy: false,
      failures: [
        { name: 'b', reason: 'cache not synced' },
        { name: 'c', reason: 'not leader' },
        { name: 'd', reason: 'plain string' },
      ],
    },
  ])('$name', async ({ checks, healthy, failures }) => {
    const health = newHealthChecks();
    for (const [name, check] of Object.entries(checks)) health.addReadinessCheck(name, check);
    expect(await health.check('readiness')).toEqual({ healthy, failures });
  });

  test('liveness and readiness are separate sets', async () => {
    const health = newHealthChecks();
    health.addReadinessCheck('sync', () => {
      throw new Error('no');
    });
    health.addLivenessCheck('alive', () => undefined);
    expect((await health.check('liveness')).healthy).toBe(true);
    expect((await health.check('readiness')).healthy).toBe(false);
  });

  test('a name is registered once per kind', () => {
    const health = newHealthChecks();
    health.addLivenessCheck('x', () => undefined);
    health.addReadinessCheck('x', () => undefined);
    expect(() => health.addLivenessCheck('x', () => undefined)).toThrow(MeshError);
  });
});

describe('health HTTP handler', () => {
  let server: Server;
  let base: string;
  let ready = false;
  const health: HealthChecks = newHealthChecks();

  beforeAll(async () => {
    health.addLivenessCheck('ping', () => undefined);
    health.addReadinessCheck('cache', () => {
      if (!ready) throw new Error('cache not synced');
    });
    const live = healthHttpHandler(health, 'liveness');
    const readiness = healthHttpHandler(health, 'readiness');
    server = createServer((req, res) => void (req.url === '/healthz' ? live(req, res) : readiness(req, res)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('200 ok when healthy, 503 naming the failing checks otherwise', async () => {
    ready = false;
    const failing = await fetch(`${base}/readyz`);
    expect(failing.status).toBe(503);
    expect(await failing.text()).toBe('[-]cache failed: cache not synced\nreadiness check failed');

    const live = await fetch(`${base}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.text()).toBe('ok');

    ready = true;
    const passing = await fetch(`${base}/readyz`);
    expect(passing.status).toBe(200);
    expect(passing.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await passing.text()).toBe('ok');
  });

  test('works inside fastify through the raw request and response', async () => {
    const app = fastify();
    try {
      app.get('/healthz/ready', async (request, reply) => {
        reply.hijack();
        await healthHttpHandler(health, 'readiness')(request.raw, reply.raw);
      });
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      ready = false;
      const down = await fetch(`${address}/healthz/ready`);
      expect(down.status).toBe(503);
      expect(await down.text()).toContain('[-]cache failed');
      ready = true;
      const up = await fetch(`${address}/healthz/ready`);
      expect([up.status, await up.text()]).toEqual([200, 'ok']);
    } finally {
      await app.close();
    }
  });
});
