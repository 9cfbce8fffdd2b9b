import { Agent, request, type IncomingMessage } from 'node:http';
import { describe, expect, test } from '@jest/globals';
import { newFastifyRunnable } from './http-server.js';
import { newNopLogger } from './log/logger.js';

/** A server with `/slow` (answered 100 ms after `entered` is called) and `/stall` (a head and one chunk, then nothing: a download its client stopped reading). */
function stallingServer(closeGraceMs: number, entered: () => void = () => undefined) {
  return newFastifyRunnable({
    name: 'test',
    host: '127.0.0.1',
    port: 0,
    log: newNopLogger(),
    closeGraceMs,
    configure: (app) => {
      app.get('/slow', async () => {
        entered();
        await new Promise((done) => setTimeout(done, 100));
        return 'done';
      });
      app.get('/stall', (_request, reply) => {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'application/octet-stream' });
        reply.raw.write('first chunk');
      });
    },
  });
}

/** Sends GET `path`; resolves with the response once its head arrives, and with how the body ended. */
function get(port: number, path: string, agent?: Agent): Promise<{ response: IncomingMessage; ended: Promise<{ body: string; complete: boolean }> }> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, ...(agent ? { agent } : {}) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      const ended = new Promise<{ body: string; complete: boolean }>((done) => response.on('close', () => done({ body, complete: response.complete })));
      resolve({ response, ended });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

describe('stopping an HTTP server', () => {
  test('a request in flight finishes, and its keep-alive connection then ends', async () => {
    let enter!: () => void;
    const inHandler = new Promise<void>((resolve) => (enter = resolve));
    // A grace longer than the test's timeout: the stop must not wait for it.
    const server = stallingServer(120_000, enter);
    const controller = new AbortController();
    const running = server.start(controller.signal);
    await server.waitForReady();
    const keepAlive = new Agent({ keepAlive: true });
    const answering = get(server.boundAddress().port, '/slow', keepAlive);
    // The request is in its handler (100 ms long) when the stop comes.
    await inHandler;
    controller.abort();
    const { response, ended } = await answering;
    expect(response.headers.connection).toBe('close');
    expect(await ended).toEqual({ body: 'done', complete: true });
    await running;
    keepAlive.destroy();
  });

  test('a stalled answer does not hold the stop: its connection ends after the grace', async () => {
    const graceMs = 200;
    const server = stallingServer(graceMs);
    const controller = new AbortController();
    const running = server.start(controller.signal);
    await server.waitForReady();
    const { response, ended } = await get(server.boundAddress().port, '/stall');
    expect(response.statusCode).toBe(200);
    const stopAsked = Date.now();
    controller.abort();
    await running;
    // Not before the grace; and, without it, never (the handler never ends the answer).
    expect(Date.now() - stopAsked).toBeGreaterThanOrEqual(graceMs - 20);
    expect(await ended).toEqual({ body: 'first chunk', complete: false });
  });
});
