import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface ListenerSetOptions {
  /** Every listener binds on this address. */
  podAddress: string;
}

/**
 * The data plane's listening sockets by key (`inbound:<port>`, `outbound`, `listener:<name>`).
 * Accepted sockets come paused, for the listener filters to read first.
 */
export interface ListenerSet {
  /** Binds `port` under `key` unless the key is taken already; rejects when the port cannot be bound. */
  listen(key: string, port: number, onSocket: (socket: Socket) => void): Promise<void>;
  /** Stops accepting on the key; its open connections stay. */
  close(key: string): void;
  /** Drops a key whose bind failed, so that a later `listen` tries it again. */
  forget(key: string): void;
  keys(): string[];
  /** Bound addresses by key. */
  addresses(): ReadonlyMap<string, { address: string; port: number }>;
}

export function newListenerSet(options: ListenerSetOptions): ListenerSet {
  const servers = new Map<string, Server>();
  const bound = new Map<string, { address: string; port: number }>();
  return {
    async listen(key, port, onSocket) {
      if (servers.has(key)) return;
      const server = createTcpServer({ pauseOnConnect: true, noDelay: true }, onSocket);
      servers.set(key, server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, options.podAddress, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      bound.set(key, { address: address.address, port: address.port });
    },
    close(key) {
      servers.get(key)?.close();
      servers.delete(key);
      bound.delete(key);
    },
    forget: (key) => void servers.delete(key),
    keys: () => [...servers.keys()],
    addresses: () => bound,
  };
}
