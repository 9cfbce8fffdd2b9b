import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { MeshError } from './errors.js';
import type { ListenAddress } from './listen-address.js';
import type { Logger } from './log/logger.js';
import type { Runnable } from './runnable.js';
import { settledOrAborted, untilAborted } from './until-aborted.js';

/** An HTTP server in the manager's first start group; ready once it listens. */
export interface HttpServerRunnable extends Runnable {
  readonly group: 'httpServer';
  waitForReady(signal?: AbortSignal): Promise<void>;
  /** Where the server listens (the real port when asked for port 0); throws before it listens. */
  boundAddress(): ListenAddress;
}

export interface FastifyRunnableOptions {
  name: string;
  host: string;
  port: number;
  log: Logger;
  /** Registers routes and hooks on the fresh instance. */
  configure: (app: FastifyInstance) => void | Promise<void>;
  /** How long stopping waits for requests in flight before it ends their connections; default 2 s. */
  closeGraceMs?: number;
}

/**
 * Long enough for a scrape or a debug view to finish; a client that stalls a long answer (a heap
 * snapshot it stopped reading) must not hold the process's shutdown.
 */
const DEFAULT_CLOSE_GRACE_MS = 2000;

/** Closes the server: requests in flight get the grace to finish, then their connections end. */
async function closeWithin(app: FastifyInstance, graceMs: number): Promise<void> {
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The lifecycle shared by our fastify servers: build and bind in start(), serve until the
 * signal aborts, then close. Nothing is allocated before start().
 */
export function newFastifyRunnable(options: FastifyRunnableOptions): HttpServerRunnable {
  const { name, host, port, log } = options;
  let bound: ListenAddress | undefined;
  let started = false;
  let markReady!: () => void;
  let markFailed!: (error: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  // A failure is reported by start(); waiting is optional, so an unobserved rejection is fine.
  ready.catch(() => undefined);

  return {
    name,
    group: 'httpServer',

    async start(signal: AbortSignal): Promise<void> {
      if (started) throw new MeshError('already-started', `${name} server: start() called twice`);
      started = true;
      if (signal.aborted) {
        markFailed(new MeshError('stopped-before-start', `${name} server: stopped before it listened`));
        return;
      }
      // Loaded on first use: processes that import the runtime without serving HTTP (the agent) skip its cost.
      const { fastify } = await import('fastify');
      const app = fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } });
      let closing = false;
      // An answer finished while the server closes ends its connection: a keep-alive client would hold the close.
      app.addHook('onSend', async (_request, reply) => {
        if (closing) void reply.header('connection', 'close');
      });
      try {
        await options.configure(app);
        await app.listen({ host, port });
      } catch (error) {
        await app.close().catch(() => undefined);
        const failure = new MeshError('listen-failed', `${name} server: cannot listen on ${formatHostPort(host, port)}: ${describeListenError(error)}`, {
          cause: error,
        });
        markFailed(failure);
        throw failure;
      }
      const address = app.server.address() as AddressInfo;
      bound = { host: address.address, port: address.port };
      log.info({ server: name, address: formatHostPort(bound.host, bound.port) }, 'listening');
      markReady();
      try {
        await untilAborted(signal);
      } finally {
        closing = true;
        await closeWithin(app, options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS);
        bound = undefined;
        log.info({ server: name }, 'stopped');
      }
    },

    waitForReady(signal?: AbortSignal): Promise<void> {
      return settledOrAborted(ready, signal);
    },

    boundAddress(): ListenAddress {
      if (!bound) throw new MeshError('not-listening', `${name} server is not listening`);
      return bound;
    },
  };
}

/** `host:port`, an IPv6 address in brackets. */
export function formatHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function describeListenError(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  return code ?? message ?? String(error);
}
