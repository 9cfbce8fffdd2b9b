import type { KubeConfig } from '@kubernetes/client-node';
import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { Writable } from 'node:stream';
import { MeshError, errorMessage } from '../../runtime/index.js';

export interface PodForwardTarget {
  readonly namespace: string;
  readonly pod: string;
  /** The pod's port. */
  readonly port: number;
  /** Where to listen (default `127.0.0.1`). */
  readonly address?: string;
  /** The local port (default 0: a free one). */
  readonly localPort?: number;
  /** Told when the pod side fails a connection (a refused port), as client-go logs it. */
  readonly onError?: (error: MeshError<'port-forward-failed'>) => void;
}

export interface PodForward {
  readonly address: string;
  readonly localPort: number;
  /** Stops listening and cuts the connections being forwarded. */
  close(): Promise<void>;
}

/** The part of the WebSocket client-node hands back that the forwarder uses. */
interface ForwardSocket {
  on(event: 'close' | 'error', listener: () => void): void;
  close(): void;
}

const isForwardSocket = (value: unknown): value is ForwardSocket =>
  typeof value === 'object' && value !== null && typeof (value as ForwardSocket).on === 'function' && typeof (value as ForwardSocket).close === 'function';

/** `failure running port forward process: <cause>`, the reference's wording for every failure. */
export function portForwardFailure(cause: unknown): MeshError<'port-forward-failed'> {
  return new MeshError('port-forward-failed', `failure running port forward process: ${kubeMessage(cause)}`, { cause });
}

/**
 * Forwards a local port to a pod's port through the API server (client-node's `PortForward`,
 * one WebSocket per connection), after checking, as the reference does, that the pod runs.
 */
export async function forwardToPod(kubeConfig: KubeConfig, target: PodForwardTarget): Promise<PodForward> {
  const { CoreV1Api, PortForward } = await import('@kubernetes/client-node');
  try {
    const pod = await kubeConfig.makeApiClient(CoreV1Api).readNamespacedPod({ name: target.pod, namespace: target.namespace });
    const phase = pod.status?.phase ?? '';
    if (phase !== 'Running') throw new MeshError('port-forward-failed', `pod is not running. Status=${phase}`);
  } catch (error) {
    throw portForwardFailure(error);
  }
  const forwarder = new PortForward(kubeConfig);
  const sockets = new Set<ForwardSocket>();
  const connections = new Set<Socket>();
  const server = createServer((local) => {
    connections.add(local);
    local.on('close', () => connections.delete(local));
    local.on('error', () => local.destroy());
    let failed = '';
    const errors = new Writable({
      write(chunk: Buffer, _encoding, done) {
        failed += chunk.toString('utf8');
        done();
      },
    });
    const report = (cause: string): void => {
      target.onError?.(portForwardFailure(`an error occurred forwarding ${(server.address() as AddressInfo).port} -> ${target.port}: ${cause}`));
    };
    forwarder.portForward(target.namespace, target.pod, [target.port], local, errors, local).then(
      (socket) => {
        if (!isForwardSocket(socket)) return;
        sockets.add(socket);
        socket.on('error', () => local.destroy());
        socket.on('close', () => {
          sockets.delete(socket);
          if (failed !== '') {
            report(failed);
            local.destroy();
          } else local.end();
        });
        if (local.destroyed) socket.close();
      },
      (error: unknown) => {
        report(errorMessage(error));
        local.destroy();
      },
    );
  });
  const address = target.address ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(portForwardFailure(error)));
    server.listen(target.localPort ?? 0, address, () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    address,
    localPort: (server.address() as AddressInfo).port,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.close();
        for (const local of connections) local.destroy();
      });
      return closed;
    },
  };
}

/** An API error's `Status` message (`pods "x" not found`), else the error's own. */
export function kubeMessage(error: unknown): string {
  const body = (error as { body?: unknown } | undefined)?.body;
  if (typeof body === 'string') {
    try {
      const message = (JSON.parse(body) as { message?: unknown }).message;
      if (typeof message === 'string') return message;
    } catch {
      return body;
    }
  }
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
  return errorMessage(error);
}
