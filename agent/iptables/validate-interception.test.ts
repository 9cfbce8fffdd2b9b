import { connect, createServer, type Server, type Socket } from 'node:net';
import { describe, expect, test } from '@jest/globals';
import { MeshError } from '../../runtime/index.js';
import { freePort } from '../../testing/wait-for.js';
import { validateInterception } from './validate-interception.js';

const PROBE_HOST = '127.0.0.6';

/** A server on the probe address that stands in for the rules: what it does with each connection decides. */
async function withProbeAddress<T>(port: number, handle: (socket: Socket) => void, body: () => Promise<T>): Promise<T> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    handle(socket);
  });
  await new Promise<void>((resolve) => server.listen(port, PROBE_HOST, resolve));
  try {
    return await body();
  } finally {
    for (const socket of sockets) socket.destroy();
    await close(server);
  }
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Forwards to `target`, as a REDIRECT rule would. */
const redirectTo = (target: number) => (socket: Socket) => {
  const upstream = connect({ host: '127.0.0.1', port: target });
  upstream.on('error', () => socket.destroy());
  socket.pipe(upstream).pipe(socket);
};

async function ports(): Promise<{ proxy: number; inbound: number; probe: number }> {
  return { proxy: await freePort(), inbound: await freePort(), probe: await freePort(PROBE_HOST) };
}

async function failure(promise: Promise<void>): Promise<MeshError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof MeshError)) throw new Error(`expected a MeshError, got ${String(error)}`);
  expect(error.code).toBe('iptables-validation-failed');
  return error;
}

describe('validateInterception', () => {
  test.each(['proxy', 'inbound'] as const)('passes when the probe connection is redirected to the %s port', async (to) => {
    const p = await ports();
    await withProbeAddress(p.probe, redirectTo(p[to]), () => validateInterception({ listenPorts: [p.proxy, p.inbound], probePort: p.probe, timeoutMs: 5000 }));
    // Its listeners are closed again, so the proxy can take the ports.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(p.proxy, '127.0.0.1', resolve));
    await close(server);
  });

  test('fails after the probe timeout when nothing is redirected', async () => {
    const p = await ports();
    const started = Date.now();
    const error = await failure(validateInterception({ listenPorts: [p.proxy, p.inbound], probePort: p.probe, timeoutMs: 300 }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(error.message).toBe(
      `iptables validation failed: no connection to ${PROBE_HOST}:${p.probe} was redirected to 127.0.0.1:${p.proxy}, 127.0.0.1:${p.inbound} within 300ms; traffic is not being captured`,
    );
  });

  test('fails when something else answers on the probe port', async () => {
    const p = await ports();
    await withProbeAddress(
      p.probe,
      (socket) => socket.resume(),
      () => failure(validateInterception({ listenPorts: [p.proxy, p.inbound], probePort: p.probe, timeoutMs: 300 })),
    );
  });

  test('a connection to the proxy port without the probe token does not count', async () => {
    const p = await ports();
    const impostor = (socket: Socket): void => {
      socket.resume();
      connect({ host: '127.0.0.1', port: p.proxy }, function (this: Socket) {
        this.end('0123456789abcdef');
      }).on('error', () => undefined);
    };
    await withProbeAddress(p.probe, impostor, () => failure(validateInterception({ listenPorts: [p.proxy, p.inbound], probePort: p.probe, timeoutMs: 300 })));
  });

  test('fails at once when none of the proxy ports can be listened on', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const error = await failure(validateInterception({ listenPorts: [port], probePort: await freePort(PROBE_HOST), timeoutMs: 5000 }));
      expect(error.message).toMatch(new RegExp(`^iptables validation failed: cannot listen on 127.0.0.1:${port}: .*EADDRINUSE`));
    } finally {
      await close(busy);
    }
  });
});
