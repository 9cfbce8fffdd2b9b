import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { MeshError } from './errors.js';
import type { KubeObject } from './source.js';

/**
 * The list and watch calls of the Kubernetes API, over the transport a client-node KubeConfig
 * describes (server, TLS, credentials, proxy agent). We speak HTTP ourselves instead of using
 * client-node's `Watch`: that class cannot be cancelled until response headers arrive, and it
 * silently drops lines it cannot parse, i.e. loses events without telling the caller.
 */
export type KubeTransport = Pick<KubeConfig, 'getCurrentCluster' | 'applyToHTTPSOptions'>;

export interface KubeList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** A watch event as the informer consumes it; `ERROR` events become a `KubeRequestError`. */
export type KubeWatchEvent<T extends KubeObject> = {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';
  object: T;
};

export type KubeRequestErrorCode = 'kube-status' | 'kube-bad-response' | 'kube-stream-broken' | 'kube-no-cluster';

/** A failed call: a non-2xx status or a watch `ERROR` event (`status` set), or a body we cannot read. */
export class KubeRequestError extends MeshError<KubeRequestErrorCode> {
  readonly status: number | undefined;
  /** The Status `reason` (`Expired`, `Gone`, `NotFound`, …) when the server sent one. */
  readonly reason: string | undefined;

  constructor(code: KubeRequestErrorCode, message: string, details: { status?: number; reason?: string; cause?: unknown } = {}) {
    super(code, message, { cause: details.cause });
    this.status = details.status;
    this.reason = details.reason;
  }
}

/** True when the resource version we asked for is too old (410 Gone): only a relist helps. */
export function isResourceExpired(error: unknown): boolean {
  return error instanceof KubeRequestError && (error.status === 410 || error.reason === 'Expired' || error.reason === 'Gone');
}

/**
 * True when watching again from the last resource version cannot be trusted to repair the
 * store: an event we could not read, or a client error (403, 404, …) other than 429.
 * Connection errors, broken streams, 5xx and 429 are worth a re-watch.
 */
export function needsRelist(error: unknown): boolean {
  if (!(error instanceof KubeRequestError)) return false;
  if (error.code === 'kube-bad-response') return true;
  const status = error.status;
  return status !== undefined && status >= 400 && status < 500 && status !== 429;
}

export type KubeQuery = Record<string, string | undefined>;

export interface ListAllOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Items per page (`limit`/`continue`); 0 asks for everything at once. */
  pageSize: number;
  signal: AbortSignal;
}

/**
 * Lists every object under `path`, following `continue` tokens. All pages share the first
 * page's resource version, so the result is one consistent snapshot.
 */
export async function listAll<T extends KubeObject>(transport: KubeTransport, path: string, options: ListAllOptions): Promise<KubeList<T>> {
  const items: T[] = [];
  let first: KubeList<T> | undefined;
  let continueToken: string | undefined;
  do {
    const page = await getJson<KubeList<T>>(
      transport,
      path,
      {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.pageSize > 0 ? String(options.pageSize) : undefined,
        continue: continueToken,
      },
      options.signal,
    );
    if (!Array.isArray(page.items)) {
      throw new KubeRequestError('kube-bad-response', `GET ${path}: the list has no items array`);
    }
    first ??= page;
    items.push(...page.items);
    continueToken = page.metadata?.continue || undefined;
  } while (continueToken);
  return {
    apiVersion: first.apiVersion,
    kind: first.kind,
    metadata: { resourceVersion: first.metadata?.resourceVersion ?? '' },
    items,
  };
}

export interface WatchHandlers<T extends KubeObject> {
  /** Called once the server has answered 200 and the stream is open. */
  onOpen?(): void;
  /** Called synchronously for each event, in stream order. */
  onEvent(event: KubeWatchEvent<T>): void;
}

/**
 * Runs one watch request. Resolves when the server ends the stream cleanly; rejects on a
 * non-200 answer, a watch `ERROR` event, a line that is not JSON, a broken connection, or
 * when `signal` aborts (with the abort error).
 */
export async function watchOnce<T extends KubeObject>(
  transport: KubeTransport,
  path: string,
  query: KubeQuery,
  signal: AbortSignal,
  handlers: WatchHandlers<T>,
): Promise<void> {
  const { response, release } = await get(transport, path, { ...query, watch: 'true' }, signal);
  try {
    if (response.statusCode !== 200) {
      throw await statusError(path, response);
    }
    handlers.onOpen?.();
    await readEvents(path, response, handlers.onEvent);
  } finally {
    release();
  }
}

function readEvents<T extends KubeObject>(path: string, response: IncomingMessage, onEvent: (event: KubeWatchEvent<T>) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = '';
    let settled = false;
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      response.destroy();
      reject(error);
    };
    const handleLine = (line: string): void => {
      if (line.trim() === '') return;
      let frame: { type?: unknown; object?: unknown };
      try {
        frame = JSON.parse(line) as { type?: unknown; object?: unknown };
      } catch (error) {
        throw new KubeRequestError('kube-bad-response', `watch ${path}: an event is not JSON`, { cause: error });
      }
      const object = frame.object as KubeObject | undefined;
      if (frame.type === 'ERROR') {
        const status = object as { code?: number; reason?: string; message?: string } | undefined;
        throw new KubeRequestError('kube-status', `watch ${path}: ${status?.message ?? 'error event'}`, {
          status: status?.code,
          reason: status?.reason,
        });
      }
      if (
        (frame.type !== 'ADDED' && frame.type !== 'MODIFIED' && frame.type !== 'DELETED' && frame.type !== 'BOOKMARK') ||
        typeof object !== 'object' ||
        object === null
      ) {
        throw new KubeRequestError('kube-bad-response', `watch ${path}: an event has no known type or no object`);
      }
      onEvent({ type: frame.type, object: object as T });
    };
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (settled) return;
      pending += chunk;
      let newline = pending.indexOf('\n');
      try {
        while (newline >= 0) {
          const line = pending.slice(0, newline);
          pending = pending.slice(newline + 1);
          handleLine(line);
          if (settled) return;
          newline = pending.indexOf('\n');
        }
      } catch (error) {
        fail(error);
      }
    });
    response.on('error', fail);
    response.on('close', () => {
      if (settled) return;
      if (!response.complete) {
        fail(new KubeRequestError('kube-stream-broken', `watch ${path}: the stream ended mid-response`));
        return;
      }
      try {
        handleLine(pending);
      } catch (error) {
        fail(error);
        return;
      }
      settled = true;
      resolve();
    });
  });
}

async function getJson<T>(transport: KubeTransport, path: string, query: KubeQuery, signal: AbortSignal): Promise<T> {
  const { response, release } = await get(transport, path, query, signal);
  try {
    if (response.statusCode !== 200) {
      throw await statusError(path, response);
    }
    const body = await readBody(response);
    try {
      return JSON.parse(body) as T;
    } catch (error) {
      throw new KubeRequestError('kube-bad-response', `GET ${path}: the body is not JSON`, { cause: error });
    }
  } finally {
    release();
  }
}

async function statusError(path: string, response: IncomingMessage): Promise<KubeRequestError> {
  const status = response.statusCode ?? 0;
  let reason: string | undefined;
  let message = `${status} ${response.statusMessage ?? ''}`.trim();
  try {
    const body = JSON.parse(await readBody(response)) as { reason?: unknown; message?: unknown };
    if (typeof body.reason === 'string') reason = body.reason;
    if (typeof body.message === 'string') message = `${status} ${body.message}`;
  } catch {
    // A body that is not a Status: the HTTP status alone says enough.
  }
  return new KubeRequestError('kube-status', `GET ${path}: ${message}`, { status, reason });
}

function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('error', reject);
    response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** One GET; `release` frees the socket and the per-request agent client-node built. */
async function get(transport: KubeTransport, path: string, query: KubeQuery, signal: AbortSignal): Promise<{ response: IncomingMessage; release: () => void }> {
  signal.throwIfAborted();
  const cluster = transport.getCurrentCluster();
  if (!cluster) throw new KubeRequestError('kube-no-cluster', 'the kubeconfig has no current cluster');
  const url = new URL(cluster.server.replace(/\/+$/, '') + path);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') url.searchParams.set(key, value);
  }
  const options: https.RequestOptions = {};
  await transport.applyToHTTPSOptions(options);
  signal.throwIfAborted();
  const agent = options.agent;
  const release = (): void => {
    if (agent && typeof agent === 'object') agent.destroy();
  };
  const request = url.protocol === 'http:' ? http.request : https.request;
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, method: 'GET', headers: { ...options.headers, accept: 'application/json' }, signal }, (response) =>
      resolve({ response, release }),
    );
    req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
    req.on('error', (error) => {
      release();
      reject(error);
    });
    req.end();
  });
}
