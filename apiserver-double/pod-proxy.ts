import { request as httpRequest } from 'node:http';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { PodTargets } from './pod-target.js';
import { parseProxyName } from './pod-target.js';
import { badRequest, StatusError } from './status-error.js';

/** Headers that describe one hop, never passed on (RFC 9110 §7.6.1), and the caller's credentials. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'authorization',
]);

/**
 * `pods/<[scheme:]name[:port]>/proxy/<path>`: any method, the query string passed on, the body
 * streamed both ways, to the pod's address (`status.podIP`, or the pod resolver's).
 */
export async function servePodProxy(pods: PodTargets, namespace: string, segment: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { scheme, name, port: portText } = parseProxyName(segment);
  const pod = pods.get(namespace, name);
  const port = portText !== undefined ? Number(portText) : (pod.firstContainerPort ?? 80);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw badRequest(`invalid port "${portText}"`);
  const target = pods.address(pod, port);
  if (!target) throw badRequest('address not allowed');
  const path = proxyPath(url.pathname) + url.search;
  const headers: OutgoingHttpHeaders = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(key)) headers[key] = value;
  }
  headers['host'] = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const send = scheme === 'https' ? httpsRequest : httpRequest;
  await new Promise<void>((resolve, reject) => {
    // The API server does not verify a pod's serving certificate.
    const upstream = send(
      { host: target.host, port: target.port, method: req.method ?? 'GET', path, headers, ...(scheme === 'https' ? { rejectUnauthorized: false } : {}) },
      (answer) => {
        const out: OutgoingHttpHeaders = {};
        for (const [key, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(key)) out[key] = value;
        }
        res.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(res);
        answer.on('end', resolve);
        answer.on('error', () => {
          res.destroy();
          resolve();
        });
      },
    );
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent) {
        res.destroy();
        resolve();
        return;
      }
      reject(new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${dialError(err, target.host, target.port)}`));
    });
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
}

/** The part of the request path after `/proxy` (decoded, then escaped again as Go does), `/` when empty. */
function proxyPath(pathname: string): string {
  const match = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/proxy(\/.*)?$/.exec(pathname);
  const raw = match?.[1] ?? '/';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Left as sent.
  }
  return encodeURI(decoded).replace(/\?/g, '%3F').replace(/#/g, '%23');
}

/** A failed dial as Go's net package words it. */
export function dialError(err: NodeJS.ErrnoException, host: string, port: number): string {
  const address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (err.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${address}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${address}: connect: no route to host`;
    case 'ETIMEDOUT':
      return `dial tcp ${address}: i/o timeout`;
    default:
      return `dial tcp ${address}: ${err.message}`;
  }
}
