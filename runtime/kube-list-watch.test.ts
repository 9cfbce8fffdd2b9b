import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { isResourceExpired, KubeRequestError, listAll, needsRelist, watchOnce } from './kube-list-watch.js';
import type { KubeWatchEvent } from './kube-list-watch.js';
import type { KubeObject } from './source.js';

type Route = (request: IncomingMessage, response: ServerResponse, url: URL) => void;

function kubeConfigFor(server: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: 'test', server, skipTLSVerify: true }],
    users: [{ name: 'test', token: 'secret-token' }],
    contexts: [{ name: 'test', cluster: 'test', user: 'test' }],
    currentContext: 'test',
  });
  return config;
}

const cm = (name: string, resourceVersion: string): KubeObject => ({
  metadata: { name, namespace: 'default', resourceVersion },
});

describe('kube list and watch over a KubeConfig', () => {
  let server: Server;
  let route: Route = (_request, response) => response.end();
  let config: KubeConfig;
  const seen: URL[] = [];
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    server = createServer((request, response) => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      seen.push(url);
      route(request, response, url);
    });
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    config = kubeConfigFor(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const signal = (): AbortSignal => new AbortController().signal;

  test('listAll follows continue tokens, sends selectors and credentials, keeps the first resourceVersion', async () => {
    const auth: (string | undefined)[] = [];
    route = (request, response, url) => {
      auth.push(request.headers.authorization);
      const page = url.searchParams.get('continue') === 'p2' ? 2 : 1;
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          kind: 'ConfigMapList',
          apiVersion: 'v1',
          metadata: { resourceVersion: page === 1 ? '10' : '99', continue: page === 1 ? 'p2' : '' },
          items: page === 1 ? [cm('a', '3')] : [cm('b', '4')],
        }),
      );
    };
    seen.length = 0;
    const list = await listAll<KubeObject>(config, '/api/v1/configmaps', {
      labelSelector: 'app=x',
      fieldSelector: 'metadata.name!=c',
      pageSize: 1,
      signal: signal(),
    });
    expect(list.items.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(list.metadata?.resourceVersion).toBe('10');
    expect(list.kind).toBe('ConfigMapList');
    expect(seen.map((u) => [u.pathname, u.searchParams.get('labelSelector'), u.searchParams.get('limit')])).toEqual([
      ['/api/v1/configmaps', 'app=x', '1'],
      ['/api/v1/configmaps', 'app=x', '1'],
    ]);
    expect(seen[0]?.searchParams.get('fieldSelector')).toBe('metadata.name!=c');
    expect(auth).toEqual(['Bearer secret-token', 'Bearer secret-token']);
  });

  test('a Status answer becomes a KubeRequestError with status and reason', async () => {
    route = (_request, response) => {
      response.statusCode = 410;
      response.end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' }));
    };
    const error = await listAll(config, '/api/v1/configmaps', { pageSize: 0, signal: signal() }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KubeRequestError);
    expect(error).toMatchObject({ code: 'kube-status', status: 410, reason: 'Expired' });
    expect(isResourceExpired(error)).toBe(true);

    route = (_request, response) => {
      response.statusCode = 503;
      response.end('<html>unavailable</html>');
    };
    const unavailable = await listAll(config, '/api/v1/configmaps', { pageSize: 0, signal: signal() }).catch((e: unknown) => e);
    expect(unavailable).toMatchObject({ code: 'kube-status', status: 503, reason: undefined });
    expect(isResourceExpired(unavailable)).toBe(false);
  });

  test('a list body that is not JSON is a bad response', async () => {
    route = (_request, response) => response.end('{"items": [');
    await expect(listAll(config, '/api/v1/configmaps', { pageSize: 0, signal: signal() })).rejects.toMatchObject({
      code: 'kube-bad-response',
    });
  });

  test('watchOnce delivers events in order, split across chunks, and resolves on a clean end', async () => {
    route = (_request, response) => {
      response.write(JSON.stringify({ type: 'ADDED', object: cm('a', '8') }) + '\n' + '{"type":"MODI');
      setImmediate(() => {
        response.write('FIED","object":' + JSON.stringify(cm('a', '9')) + '}\n');
        response.write(JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '11' } } }) + '\n');
        response.end(JSON.stringify({ type: 'DELETED', object: cm('a', '12') }));
      });
    };
    const events: KubeWatchEvent<KubeObject>[] = [];
    let opened = 0;
    seen.length = 0;
    await watchOnce<KubeObject>(config, '/api/v1/configmaps', { resourceVersion: '7' }, signal(), {
      onOpen: () => opened++,
      onEvent: (event) => events.push(event),
    });
    expect(opened).toBe(1);
    expect(seen[0]?.searchParams.get('watch')).toBe('true');
    expect(seen[0]?.searchParams.get('resourceVersion')).toBe('7');
    expect(events.map((e) => `${e.type}:${e.object.metadata?.resourceVersion}`)).toEqual(['ADDED:8', 'MODIFIED:9', 'BOOKMARK:11', 'DELETED:12']);
  });

  test.each([
    ['a line that is not JSON', 'not json\n', { code: 'kube-bad-response' }],
    ['an event of unknown type', '{"type":"SURPRISE","object":{}}\n', { code: 'kube-bad-response' }],
    [
      'an ERROR event',
      JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'gone' } }) + '\n',
      { code: 'kube-status', status: 410, reason: 'Expired' },
    ],
  ])('watchOnce rejects on %s, after the events before it', async (_what, badLine, expected) => {
    route = (_request, response) => {
      response.write(JSON.stringify({ type: 'ADDED', object: cm('a', '1') }) + '\n' + badLine);
    };
    const events: string[] = [];
    await expect(
      watchOnce<KubeObject>(config, '/api/v1/configmaps', {}, signal(), {
        onEvent: (event) => events.push(event.type),
      }),
    ).rejects.toMatchObject(expected);
    expect(events).toEqual(['ADDED']);
  });

  test('watchOnce rejects when the connection breaks mid-stream', async () => {
    route = (_request, response) => {
      response.write(JSON.stringify({ type: 'ADDED', object: cm('a', '1') }) + '\n', () => response.socket?.destroy());
    };
    await expect(watchOnce<KubeObject>(config, '/api/v1/configmaps', {}, signal(), { onEvent: () => undefined })).rejects.toBeDefined();
  });

  test('watchOnce rejects on a non-200 answer without opening', async () => {
    route = (_request, response) => {
      response.statusCode = 500;
      response.end(JSON.stringify({ kind: 'Status', code: 500, reason: 'InternalError', message: 'boom' }));
    };
    let opened = false;
    await expect(
      watchOnce<KubeObject>(config, '/api/v1/configmaps', {}, signal(), {
        onOpen: () => (opened = true),
        onEvent: () => undefined,
      }),
    ).rejects.toMatchObject({ status: 500, reason: 'InternalError' });
    expect(opened).toBe(false);
  });

  test('an abort cancels a watch whose server has not answered yet', async () => {
    let arrived!: () => void;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    route = () => arrived(); // never answers
    const controller = new AbortController();
    const watching = watchOnce<KubeObject>(config, '/api/v1/configmaps', {}, controller.signal, { onEvent: () => undefined });
    await requestArrived;
    controller.abort();
    await expect(watching).rejects.toMatchObject({ name: 'AbortError' });
  });

  test('a refused connection rejects', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(listAll(kubeConfigFor(`http://127.0.0.1:${port}`), '/api/v1/configmaps', { pageSize: 0, signal: signal() })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });
});

describe('needsRelist', () => {
  test.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), false],
    ['a broken stream', new KubeRequestError('kube-stream-broken', 'broken'), false],
    ['a 500', new KubeRequestError('kube-status', 'x', { status: 500 }), false],
    ['a 429', new KubeRequestError('kube-status', 'x', { status: 429 }), false],
    ['a 403', new KubeRequestError('kube-status', 'x', { status: 403 }), true],
    ['a 410', new KubeRequestError('kube-status', 'x', { status: 410 }), true],
    ['an unreadable event', new KubeRequestError('kube-bad-response', 'x'), true],
  ])('%s → %p', (_what, error, expected) => {
    expect(needsRelist(error)).toBe(expected);
  });
});
