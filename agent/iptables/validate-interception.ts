import { randomBytes } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { errorMessage, MeshError } from '../../runtime/index.js';

export interface InterceptionProbeOptions {
  /** Where the proxy would listen (outbound and inbound capture ports): the probe listens there instead. */
  readonly listenPorts: readonly number[];
  /** The failure-detection port: nothing listens on it, so only a redirect can connect the probe. */
  readonly probePort: number;
  readonly timeoutMs: number;
  readonly listenHost?: string;
  readonly probeHost?: string;
  readonly retryIntervalMs?: number;
}

export const DEFAULT_PROBE_LISTEN_HOST = '127.0.0.1';
/** Connecting to 127.0.0.6 goes out through OUTPUT and, when capture works, is redirected to the proxy port. */
export const DEFAULT_PROBE_HOST = '127.0.0.6';

/**
 * Checks that the rules in force intercept traffic, as the reference's `--run-validation` does:
 * listen on the proxy's ports, connect to the probe port, and pass when one of those connections
 * arrives at a proxy port. The reference reads the original destination (SO_ORIGINAL_DST) to
 * recognise its probe; Node cannot, so the probe sends a random token instead, which also tells it
 * apart from anything else connecting. Throws when no probe arrives within the timeout.
 */
export async function validateInterception(options: InterceptionProbeOptions): Promise<void> {
  const listenHost = options.listenHost ?? DEFAULT_PROBE_LISTEN_HOST;
  const probeHost = options.probeHost ?? DEFAULT_PROBE_HOST;
  const token = randomBytes(16);
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  };
  let pass = (): void => undefined;
  const passed = new Promise<void>((resolve) => (pass = resolve));

  const servers: Server[] = [];
  const listenErrors: string[] = [];
  for (const port of options.listenPorts) {
    const server = createServer((socket) => {
      track(socket);
      let received = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        if (received.length < token.length) return;
        if (received.subarray(0, token.length).equals(token)) pass();
        socket.destroy();
      });
    });
    try {
      await listen(server, port, listenHost);
      servers.push(server);
    } catch (error) {
      listenErrors.push(`${listenHost}:${port}: ${errorMessage(error)}`);
    }
  }
  const listening = options.listenPorts.map((port) => `${listenHost}:${port}`).join(', ');
  if (servers.length === 0) {
    throw new MeshError('iptables-validation-failed', `iptables validation failed: cannot listen on ${listening}: ${listenErrors.join('; ')}`);
  }

  const probe = (): void => {
    // From the listen address, as the reference's probe: the proxy UID's rules then send it to a proxy port.
    const socket = connect({ host: probeHost, port: options.probePort, localAddress: listenHost });
    track(socket);
    socket.once('connect', () => socket.end(token));
  };
  let timeout: NodeJS.Timeout | undefined;
  const retry = setInterval(probe, options.retryIntervalMs ?? 100);
  probe();
  try {
    await Promise.race([
      passed,
      new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () =>
            reject(
              new MeshError(
                'iptables-validation-failed',
                `iptables validation failed: no connection to ${probeHost}:${options.probePort} was redirected to ${listening} within ${options.timeoutMs}ms; traffic is not being captured`,
              ),
            ),
          options.timeoutMs,
        );
      }),
    ]);
  } finally {
    clearInterval(retry);
    clearTimeout(timeout);
    for (const socket of sockets) socket.destroy();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
