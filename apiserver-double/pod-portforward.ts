import { STATUS_CODES } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import { dialError } from './pod-proxy.js';
import type { PodTargets, PodView } from './pod-target.js';
import { badRequest } from './status-error.js';
import type { StatusError } from './status-error.js';

/** The kubelet's WebSocket port-forward protocol: per port, a data channel then an error channel. */
export const PORT_FORWARD_PROTOCOL = 'v4.channel.k8s.io';

/** Sends no more from a target while this many frames wait to be written to the client. */
const MAX_PENDING_FRAMES = 64;

/**
 * `pods/<name>/portforward` over WebSocket, as client-node's `PortForward` speaks it: each port's
 * channels open with its number (2 bytes, little-endian), then carry the bytes of one TCP
 * connection to the pod's address; a failed dial is reported on the error channel as the
 * kubelet reports it, and the WebSocket closes once every port's connection has ended.
 */
export class PortForwardServer {
  private readonly wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (offered) => (offered.has(PORT_FORWARD_PROTOCOL) ? PORT_FORWARD_PROTOCOL : false),
  });

  constructor(private readonly pods: PodTargets) {}

  /** Validates the request as the API server does, then upgrades it; throws a StatusError otherwise. */
  upgrade(namespace: string, name: string, query: URLSearchParams, req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const pod = this.pods.running(namespace, name);
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter((p) => p !== '');
    // kubectl tunnels SPDY/3.1 streams over a WebSocket, then falls back to a SPDY upgrade: the
    // double speaks neither, and says so rather than asking for ports.
    if ((offered.length > 0 && offered.every((p) => p.startsWith('SPDY/'))) || /^spdy\//i.test(req.headers.upgrade ?? '')) {
      throw badRequest(
        `SPDY port forwarding (${offered[0] ?? req.headers.upgrade}) is not supported by the API server double: use a WebSocket client of ${PORT_FORWARD_PROTOCOL}`,
      );
    }
    const ports = requestedPorts(query);
    if (offered.length > 0 && !offered.includes(PORT_FORWARD_PROTOCOL)) {
      throw badRequest(`unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server supports [${PORT_FORWARD_PROTOCOL}]`);
    }
    this.wss.handleUpgrade(req, socket, head, (ws) => this.forward(ws, pod, ports));
  }

  private forward(ws: WebSocket, pod: PodView, ports: number[]): void {
    const targets: (Socket | undefined)[] = [];
    let open = ports.length;
    let pending = 0;
    const send = (channel: number, data: Buffer, target?: Socket): void => {
      pending++;
      ws.send(Buffer.concat([Buffer.of(channel), data]), () => {
        pending--;
        if (pending < MAX_PENDING_FRAMES / 2) for (const t of targets) t?.resume();
      });
      if (target && pending >= MAX_PENDING_FRAMES) target.pause();
    };
    const finished = (): void => {
      open--;
      if (open === 0) ws.close(1000);
    };
    ports.forEach((port, index) => {
      const prefix = Buffer.alloc(2);
      prefix.writeUInt16LE(port);
      send(index * 2, prefix);
      send(index * 2 + 1, prefix);
    });
    ports.forEach((port, index) => {
      const address = this.pods.address(pod, port);
      const fail = (cause: string): void => {
        send(index * 2 + 1, Buffer.from(`error forwarding port ${port} to pod ${pod.name}_${pod.namespace}, uid ${pod.uid}: ${cause}`));
        finished();
      };
      if (!address) {
        targets.push(undefined);
        fail('pod has no IP address');
        return;
      }
      const target = connect({ host: address.host, port: address.port });
      targets.push(target);
      let connected = false;
      target.on('connect', () => {
        connected = true;
      });
      target.on('data', (chunk: Buffer) => send(index * 2, chunk, target));
      target.on('drain', () => ws.resume());
      target.on('error', (err: NodeJS.ErrnoException) => {
        if (!connected) fail(`failed to connect to localhost:${port} inside namespace "${pod.namespace}", IPv4: ${dialError(err, address.host, address.port)}`);
      });
      target.on('close', () => {
        if (connected) finished();
      });
    });
    ws.on('message', (data: Buffer) => {
      const channel = data[0];
      if (channel === undefined || channel % 2 !== 0) return;
      const target = targets[channel / 2];
      if (target && !target.destroyed && !target.write(data.subarray(1))) ws.pause();
    });
    ws.on('close', () => {
      for (const target of targets) target?.destroy();
    });
  }
}

/** `ports` (repeated or comma-separated), each 1–65535. */
function requestedPorts(query: URLSearchParams): number[] {
  const texts = query
    .getAll('ports')
    .flatMap((p) => p.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (texts.length === 0) throw badRequest('query parameter "port" is required');
  return texts.map((text) => {
    const port = Number(text);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw badRequest(`port "${text}" must be a valid port in the range 1-65535`);
    return port;
  });
}

/** Answers an upgrade request that is refused with a `Status` body, then closes the socket. */
export function refuseUpgrade(socket: Duplex, error: StatusError): void {
  const body = JSON.stringify(error.toStatus());
  socket.end(
    `HTTP/1.1 ${error.httpCode} ${STATUS_CODES[error.httpCode] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
