import type { Socket } from 'node:net';

/** The data plane's open sockets, downstream and upstream: what a drain waits for and a stop destroys. */
export interface OpenSockets {
  /** Counts the socket open until it closes. */
  track(socket: Socket): void;
  /** Resolves once every tracked socket has closed, or after `graceMs`, whichever comes first. */
  closed(graceMs: number): Promise<void>;
  destroyAll(): void;
}

export function newOpenSockets(): OpenSockets {
  const sockets = new Set<Socket>();
  const idleWaiters: (() => void)[] = [];
  return {
    track(socket) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        if (sockets.size === 0) for (const wake of idleWaiters.splice(0)) wake();
      });
    },
    async closed(graceMs) {
      if (sockets.size === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
    destroyAll() {
      for (const socket of sockets) socket.destroy();
    },
  };
}
