import type { Socket } from 'node:net';
import type { Logger } from '../runtime/index.js';
import type { ConfigState } from './config-state.js';
import type { ConnectionContext } from './connection-context.js';
import type { ListenerConfig } from './decisions/index.js';
import type { ListenerSet } from './listener-set.js';

/** A port to listen on, and the listener its connections go to. */
interface WantedListener {
  port: number;
  listener: string;
  direction: ConnectionContext['direction'];
}

export interface ListenerBindingOptions {
  state: ConfigState;
  listeners: ListenerSet;
  /** Takes a socket accepted for a listener. */
  accept(socket: Socket, listener: string, direction: ConnectionContext['direction']): Promise<void>;
  /** Captured inbound ports, bound whatever the config says. */
  inboundPorts?: readonly number[];
  /** The outbound capture port. */
  outboundPort?: number;
  /** Bind every listener with `bind_to_port` (gateways). */
  bindListeners?: boolean;
  /** Capture every port the `virtualInbound` chains match on. */
  captureInboundFromConfig?: boolean;
  log: Logger;
}

/**
 * Which ports the data plane listens on: the fixed capture ports, and the ports the config names
 * as they come and go, until it stops accepting.
 */
export interface ListenerBinding {
  /** Binds the fixed ports, then what the config names, now and after every config change. */
  start(): Promise<void>;
  /** Closes every listener (or the inbound ones only) and binds nothing more; open connections stay. */
  stopAccepting(inboundOnly?: boolean): void;
}

/** The sockets the config asks for: gateway listeners with `bind_to_port`, captured inbound ports. */
function wantedListeners(
  listeners: Iterable<ListenerConfig>,
  options: Pick<ListenerBindingOptions, 'bindListeners' | 'captureInboundFromConfig'>,
): Map<string, WantedListener> {
  const wanted = new Map<string, WantedListener>();
  for (const listener of listeners) {
    if (options.bindListeners) {
      const bindToPort =
        listener.bind_to_port === undefined || (typeof listener.bind_to_port === 'object' ? listener.bind_to_port.value : listener.bind_to_port);
      const port = listener.address?.socket_address?.port_value;
      if (bindToPort && port !== undefined) wanted.set(`listener:${listener.name}`, { port, listener: listener.name, direction: 'gateway' });
    }
    if (options.captureInboundFromConfig && listener.name === 'virtualInbound') {
      for (const chain of listener.filter_chains ?? []) {
        const raw = chain.filter_chain_match?.destination_port;
        const port = typeof raw === 'object' ? raw.value : raw;
        if (port !== undefined && port !== listener.address?.socket_address?.port_value) {
          wanted.set(`inbound:${port}`, { port, listener: 'virtualInbound', direction: 'inbound' });
        }
      }
    }
  }
  return wanted;
}

export function newListenerBinding(options: ListenerBindingOptions): ListenerBinding {
  const { state, listeners, log } = options;
  let stopped = false;
  const accepting =
    (listener: string, direction: ConnectionContext['direction']) =>
    (socket: Socket): void =>
      void options.accept(socket, listener, direction);

  /** Binds what the config names; a listener that goes away stops accepting, its connections stay. */
  const sync = async (): Promise<void> => {
    if (stopped || (!options.bindListeners && !options.captureInboundFromConfig)) return;
    const fixed = new Set((options.inboundPorts ?? []).map((port) => `inbound:${port}`));
    const wanted = wantedListeners(state.current().resources.listeners, options);
    for (const key of listeners.keys()) {
      if ((key.startsWith('listener:') || key.startsWith('inbound:')) && !wanted.has(key) && !fixed.has(key)) listeners.close(key);
    }
    for (const [key, { port, listener, direction }] of wanted) {
      await listeners.listen(key, port, accepting(listener, direction)).catch((error: Error) => {
        log.error({ key, port, error: error.message }, 'cannot bind listener');
        listeners.forget(key);
      });
    }
  };

  return {
    async start() {
      for (const port of options.inboundPorts ?? []) {
        await listeners.listen(`inbound:${port}`, port, accepting('virtualInbound', 'inbound'));
      }
      if (options.outboundPort !== undefined) {
        await listeners.listen('outbound', options.outboundPort, accepting('virtualOutbound', 'outbound'));
      }
      state.onChange(() => {
        sync().catch((error: Error) => log.error({ error: error.message }, 'listener update failed'));
      });
      await sync();
    },
    stopAccepting(inboundOnly = false) {
      stopped = true;
      for (const key of listeners.keys()) if (!inboundOnly || key.startsWith('inbound:')) listeners.close(key);
    },
  };
}
