import type { Clock, Logger } from '../runtime/index.js';
import type { XdsCallbacks } from './xds-callbacks.js';
import { XdsConnection, type XdsConnectionOptions } from './xds-connection.js';

export interface ConnectionRegistryOptions {
  clock: Clock;
  callbacks: XdsCallbacks;
  /** The `ads` scope. */
  log: Logger;
}

/** The connected streams, by connection id. */
export interface ConnectionRegistry {
  connect(input: Omit<XdsConnectionOptions, 'id' | 'connectedAt'>): XdsConnection;
  /** Closes and forgets the connection; false when it was closed already. */
  disconnect(con: XdsConnection): boolean;
  connections(): XdsConnection[];
  /** A connection by its id, its proxy's `<pod>.<namespace>` or its full node id (the newest wins). */
  findConnection(proxyId: string): XdsConnection | undefined;
  /** The streams of proxies: those that asked for config, not only for debug views. */
  proxyConnections(): XdsConnection[];
  /** The proxy NACKed the type's last response (for the reject gauges). */
  markRejecting(con: XdsConnection, typeUrl: string): void;
  /** The proxy accepted the type again. */
  clearRejecting(con: XdsConnection, typeUrl: string): void;
}

export function newConnectionRegistry(options: ConnectionRegistryOptions): ConnectionRegistry {
  const { clock, callbacks, log } = options;
  const byId = new Map<string, XdsConnection>();
  let counter = 0;

  const connections = (): XdsConnection[] => [...byId.values()];

  return {
    connect(input) {
      const con = new XdsConnection({ ...input, id: `${input.proxy.id}-${++counter}`, connectedAt: clock.now() });
      byId.set(con.id, con);
      callbacks.onStreamOpen?.(con);
      log.info({ connection: con.id, peer: con.peerAddress, stream: con.kind }, 'new connection');
      return con;
    },

    disconnect(con) {
      const wasRejecting = con.close();
      if (!wasRejecting) return false;
      byId.delete(con.id);
      callbacks.onStreamClosed?.(con);
      for (const typeUrl of wasRejecting) callbacks.onRejectingChange?.(typeUrl, -1);
      log.info({ connection: con.id }, 'connection closed');
      return true;
    },

    connections,

    findConnection(proxyId) {
      const direct = byId.get(proxyId);
      if (direct) return direct;
      // The newest stream of the proxy that subscribes to something: a debug stream opened with the
      // same node (the agent's debug port does that) holds no config.
      let found: XdsConnection | undefined;
      for (const con of byId.values()) {
        if (con.proxy.id !== proxyId && con.proxy.nodeId !== proxyId) continue;
        if (!found || con.watches.size > 0 || found.watches.size === 0) found = con;
      }
      return found;
    },

    proxyConnections: () => connections().filter((con) => !con.debugOnly),

    markRejecting(con, typeUrl) {
      if (con.markRejecting(typeUrl)) callbacks.onRejectingChange?.(typeUrl, 1);
    },

    clearRejecting(con, typeUrl) {
      if (con.clearRejecting(typeUrl)) callbacks.onRejectingChange?.(typeUrl, -1);
    },
  };
}
