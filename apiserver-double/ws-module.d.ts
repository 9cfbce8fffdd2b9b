/**
 * The part of `ws` (a dependency of @kubernetes/client-node, which ships no types for it) the
 * double uses to accept WebSocket upgrades.
 */
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { IncomingMessage } from 'node:http';
  import type { Duplex } from 'node:stream';

  export class WebSocket extends EventEmitter {
    static readonly OPEN: 1;
    readonly protocol: string;
    readonly readyState: number;
    send(data: Buffer | string, cb?: (err?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    pause(): void;
    resume(): void;
  }

  export interface WebSocketServerOptions {
    noServer: true;
    handleProtocols?: (protocols: Set<string>, request: IncomingMessage) => string | false;
    perMessageDeflate?: boolean;
  }

  export class WebSocketServer extends EventEmitter {
    constructor(options: WebSocketServerOptions);
    handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, callback: (ws: WebSocket, request: IncomingMessage) => void): void;
    close(): void;
  }

  export default WebSocket;
}
