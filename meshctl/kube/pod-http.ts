import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'node:http';
import type { MeshError } from '../../runtime/index.js';
import { forwardToPod, portForwardFailure } from './port-forward.js';

export interface PodHttpRequest {
  readonly namespace: string;
  readonly pod: string;
  readonly port: number;
  readonly method: string;
  /** With or without the leading `/`; may carry a query string. */
  readonly path: string;
  readonly body?: string | Buffer;
  /** Further request headers (`Content-Type` of a body). */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface PodHttpResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * One HTTP request to a pod's port through a port-forward opened for it, then closed: the
 * reference's `EnvoyDo`/`AllDiscoveryDo` building block. Failures read
 * `failure running port forward process: <cause>`.
 */
export async function podHttp(kubeConfig: KubeConfig, req: PodHttpRequest): Promise<PodHttpResponse> {
  let podSide: MeshError<'port-forward-failed'> | undefined;
  const forward = await forwardToPod(kubeConfig, {
    namespace: req.namespace,
    pod: req.pod,
    port: req.port,
    onError: (error) => {
      podSide ??= error;
    },
  });
  try {
    return await new Promise<PodHttpResponse>((resolve, reject) => {
      const body = req.body === undefined ? undefined : Buffer.from(req.body);
      const outgoing = request(
        {
          host: forward.address,
          port: forward.localPort,
          method: req.method,
          path: req.path.startsWith('/') ? req.path : `/${req.path}`,
          agent: false,
          headers: { ...req.headers, ...(body ? { 'Content-Length': body.length } : {}) },
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
          answer.on('error', (error) => reject(podSide ?? portForwardFailure(error)));
        },
      );
      outgoing.on('error', (error) => reject(podSide ?? portForwardFailure(error)));
      outgoing.end(body);
    });
  } finally {
    await forward.close();
  }
}
