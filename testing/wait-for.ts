/**
 * Test helpers shared by every package: wait for a condition (never a fixed sleep) and pick a
 * free loopback port.
 */
import { createServer } from 'node:net';

export interface WaitForOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Included in the timeout error. */
  description?: string;
}

/** Polls `predicate` until it returns a truthy value (which is returned) or the time is up. */
export async function waitFor<T>(
  predicate: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const intervalMs = options.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const detail = lastError instanceof Error ? `: last error: ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs}ms waiting for ${options.description ?? 'condition'}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Where `freePort` picks: below Linux's ephemeral range (32768–60999). A port from that range,
 * once released, can become the source port of any outgoing connection on the machine before
 * the server that was meant to bind it does (EADDRINUSE), and a test run opens thousands.
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_768;

/**
 * The ports this test file was given: a port is free again until its server binds it, and a test
 * that asks for several before starting the process that binds them must get different ones.
 */
const givenPorts = new Set<number>();

/** A port that was free a moment ago on `host`, for a server another process will bind; never one given before. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if (givenPorts.has(port)) continue;
    if (await canListen(host, port)) {
      givenPorts.add(port);
      return port;
    }
  }
  throw new Error(`no free port on ${host} from ${PORTS_FROM} to ${PORTS_TO - 1}`);
}

function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
