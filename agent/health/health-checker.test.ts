import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newNopLogger, newRealClock } from '../../runtime/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { newHealthChecker, type HealthChecker } from './health-checker.js';
import { runProbeAction, type ProbeOutcome } from './probe-action.js';
import { parseReadinessProbe, ReadinessProbeError, type ReadinessProbe } from './readiness-probe.js';

// The application health check against real things: an HTTP server whose answer flips, a TCP
// port that opens and closes, and commands that succeed or fail; periods of a few milliseconds.
const PERIOD = 0.01;
const checkers: HealthChecker[] = [];
const cleanups: (() => void | Promise<void>)[] = [];

afterEach(async () => {
  for (const checker of checkers.splice(0)) checker.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function check(probe: ReadinessProbe, gate?: () => string | undefined): ProbeOutcome[] {
  const events: ProbeOutcome[] = [];
  const checker = newHealthChecker({
    probe,
    ...(gate ? { gate } : {}),
    onChange: (event) => events.push(event),
    clock: newRealClock(),
    log: newNopLogger('healthcheck'),
  });
  checkers.push(checker);
  checker.start();
  return events;
}

function probeOf(spec: Record<string, unknown>): ReadinessProbe {
  const probe = parseReadinessProbe({ periodSeconds: PERIOD, ...spec });
  if (!probe) throw new Error('no probe');
  return probe;
}

async function httpApp(): Promise<{ port: number; state: { code: number; requests: number } }> {
  const state = { code: 200, requests: 0 };
  const server: HttpServer = createHttpServer((req, res) => {
    state.requests += 1;
    res.writeHead(req.headers['x-probe'] === 'yes' ? state.code : 418);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.address() as AddressInfo).port, state };
}

describe('the readiness probe of a proxy config', () => {
  test('takes the reference defaults and refuses what cannot be probed', () => {
    expect(parseReadinessProbe(undefined)).toBeUndefined();
    expect(parseReadinessProbe({ httpGet: { port: 8080 } })).toEqual({
      action: { kind: 'http', scheme: 'http', host: 'localhost', port: 8080, path: '/', headers: [] },
      initialDelayMs: 0,
      timeoutMs: 1000,
      periodMs: 10_000,
      successThreshold: 1,
      failureThreshold: 1,
    });
    expect(parseReadinessProbe({ tcpSocket: { port: 5432 }, periodSeconds: 5, failureThreshold: 3, initialDelaySeconds: 2 })).toMatchObject({
      action: { kind: 'tcp', host: 'localhost', port: 5432 },
      periodMs: 5000,
      failureThreshold: 3,
      initialDelayMs: 2000,
    });
    expect(() => parseReadinessProbe({})).toThrow(ReadinessProbeError);
    expect(() => parseReadinessProbe({ httpGet: { port: 80 }, exec: { command: ['true'] } })).toThrow(/exactly one/);
    expect(() => parseReadinessProbe({ exec: { command: [] } })).toThrow(/exec.command/);
    expect(() => parseReadinessProbe({ httpGet: { port: 70000 } })).toThrow(/httpGet.port/);
    expect(() => parseReadinessProbe({ httpGet: { port: 80, scheme: 'FTP' } })).toThrow(/scheme/);
  });
});

describe('one probe', () => {
  test('exec: exit 0 is healthy, another status is not, and a command over the timeout is killed', async () => {
    expect(await runProbeAction({ kind: 'exec', command: ['true'] }, 1000)).toEqual({ healthy: true });
    expect(await runProbeAction({ kind: 'exec', command: ['false'] }, 1000)).toEqual({ healthy: false, message: 'exit status 1' });
    expect(await runProbeAction({ kind: 'exec', command: ['sleep', '5'] }, 50)).toMatchObject({
      healthy: false,
      message: expect.stringContaining('command timeout exceeded'),
    });
  });

  test('http: 200 to 399 is healthy, other codes and a closed port are not', async () => {
    const app = await httpApp();
    const action = { kind: 'http', scheme: 'http', host: '127.0.0.1', port: app.port, path: '/ready', headers: [{ name: 'X-Probe', value: 'yes' }] } as const;
    app.state.code = 302;
    expect(await runProbeAction(action, 1000)).toEqual({ healthy: true });
    app.state.code = 503;
    expect(await runProbeAction(action, 1000)).toEqual({ healthy: false, message: 'status code was not from [200,400), bad code 503' });
    expect(await runProbeAction({ ...action, headers: [] }, 1000)).toMatchObject({ message: expect.stringContaining('bad code 418') });
  });
});

describe('the health check', () => {
  test('http: healthy after successThreshold successes, unhealthy after failureThreshold failures, and back', async () => {
    const app = await httpApp();
    const events = check(
      probeOf({
        httpGet: { host: '127.0.0.1', port: app.port, path: '/ready', httpHeaders: [{ name: 'X-Probe', value: 'yes' }] },
        successThreshold: 2,
        failureThreshold: 3,
      }),
    );
    await waitFor(() => events.length === 1, { description: 'the first verdict' });
    expect(events[0]).toEqual({ healthy: true });
    expect(app.state.requests).toBeGreaterThanOrEqual(2);

    app.state.code = 500;
    const before = app.state.requests;
    await waitFor(() => events.length === 2, { description: 'unhealthy' });
    expect(events[1]).toEqual({ healthy: false, message: 'status code was not from [200,400), bad code 500' });
    // Three failures in a row, at least, before the verdict (one probe may have been under way at the flip).
    expect(app.state.requests - before).toBeGreaterThanOrEqual(3);

    app.state.code = 200;
    await waitFor(() => events.length === 3, { description: 'healthy again' });
    expect(events[2]).toEqual({ healthy: true });
    // Only changes are told.
    const told = events.length;
    const seen = app.state.requests;
    await waitFor(() => app.state.requests >= seen + 5, { description: 'more probes' });
    expect(events.length).toBe(told);
  });

  test('tcp: the port open is healthy, closed is not', async () => {
    const server: TcpServer = createTcpServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const events = check(probeOf({ tcpSocket: { host: '127.0.0.1', port }, failureThreshold: 2 }));
    await waitFor(() => events.length === 1, { description: 'healthy' });
    expect(events[0]).toEqual({ healthy: true });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await waitFor(() => events.length === 2, { description: 'unhealthy' });
    expect(events[1]).toMatchObject({ healthy: false, message: expect.stringContaining(`127.0.0.1:${port}`) });
  });

  test('exec: a command that starts failing makes the workload unhealthy; the first verdict may be unhealthy', async () => {
    const work = mkdtempSync(join(tmpdir(), 'health-exec-'));
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const flag = join(work, 'ready');
    const events = check(probeOf({ exec: { command: ['test', '-e', flag] } }));
    await waitFor(() => events.length === 1, { description: 'the first verdict' });
    expect(events[0]).toEqual({ healthy: false, message: 'exit status 1' });
    writeFileSync(flag, '');
    await waitFor(() => events.length === 2, { description: 'healthy' });
    expect(events[1]).toEqual({ healthy: true });
    rmSync(flag);
    await waitFor(() => events.length === 3, { description: 'unhealthy again' });
    expect(events[2]).toEqual({ healthy: false, message: 'exit status 1' });
  });

  test('a gate (the data plane not ready) fails the probe with its reason, before the app is asked', async () => {
    let reason: string | undefined = 'the data plane is not ready';
    const events = check(probeOf({ exec: { command: ['true'] } }), () => reason);
    await waitFor(() => events.length === 1, { description: 'unhealthy' });
    expect(events[0]).toEqual({ healthy: false, message: 'the data plane is not ready' });
    reason = undefined;
    await waitFor(() => events.length === 2, { description: 'healthy' });
    expect(events[1]).toEqual({ healthy: true });
  });
});
