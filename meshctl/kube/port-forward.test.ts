import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startApiServerDouble } from '../../apiserver-double/index.js';
import type { ApiServerDouble } from '../../apiserver-double/index.js';
import { freePort } from '../../testing/wait-for.js';
import { forwardToPod } from './port-forward.js';
import { podHttp } from './pod-http.js';
import { startHashingEchoServer } from '../../testing/hashing-echo-server.js';

// The pods' network stand-in: the app listens on a loopback address of its own, the pod's IP.
const POD_IP = '127.0.0.4';
const REFUSING_IP = '127.0.0.5';

/** An admin endpoint: answers with the request it got (method, path, body size and hash). */
/** One request to the local end of a forward, on a connection of its own. */
function call(port: number, method: string, path: string, body?: Buffer): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent: false, headers: body ? { 'Content-Length': body.length } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('meshctl port-forward to a pod through the API server', () => {
  let server: ApiServerDouble;
  let pod: Server;
  let podPort = 0;
  let refusedPort = 0;

  beforeAll(async () => {
    pod = await startHashingEchoServer(POD_IP);
    podPort = (pod.address() as AddressInfo).port;
    refusedPort = await freePort(REFUSING_IP);
    server = await startApiServerDouble({ bookmarkIntervalMs: 0 });
    const api = server.kubeConfig().makeApiClient(CoreV1Api);
    const create = async (name: string, status?: Record<string, unknown>) => {
      await api.createNamespacedPod({
        namespace: 'mesh-system',
        body: { metadata: { name }, spec: { nodeName: 'node-1', containers: [{ name: 'discovery', image: 'meshd' }] } },
      });
      if (status) await api.replaceNamespacedPodStatus({ name, namespace: 'mesh-system', body: { metadata: { name }, status } });
    };
    await api.createNamespace({ body: { metadata: { name: 'mesh-system' } } });
    await create('meshd-1', { phase: 'Running', podIP: POD_IP });
    await create('refusing', { phase: 'Running', podIP: REFUSING_IP });
    await create('starting');
  }, 30_000);

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => pod?.close(resolve));
  });

  test('concurrent requests and a large body cross one forward; close stops listening', async () => {
    const forward = await forwardToPod(server.kubeConfig(), { namespace: 'mesh-system', pod: 'meshd-1', port: podPort });
    expect(forward.address).toBe('127.0.0.1');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call(forward.localPort, 'GET', `/debug/syncz?i=${i}`)));
    expect(answers.map((a) => a.json['url'])).toEqual(Array.from({ length: 8 }, (_, i) => `/debug/syncz?i=${i}`));
    const body = Buffer.alloc(4 * 1024 * 1024 + 7);
    for (let i = 0; i < body.length; i++) body[i] = (i * 31) & 0xff;
    const [posted, alongside] = await Promise.all([call(forward.localPort, 'POST', '/upload', body), call(forward.localPort, 'GET', '/stats')]);
    expect(posted.json).toEqual({
      method: 'POST',
      url: '/upload',
      size: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
      authorization: null,
    });
    expect(alongside.json['url']).toBe('/stats');
    await forward.close();
    await expect(
      new Promise((resolve, reject) => {
        const socket = connect(forward.localPort, '127.0.0.1', () => resolve(socket.destroy()));
        socket.on('error', reject);
      }),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  test('a local port given is the one listened on', async () => {
    const localPort = await freePort();
    const forward = await forwardToPod(server.kubeConfig(), { namespace: 'mesh-system', pod: 'meshd-1', port: podPort, localPort });
    try {
      expect(forward.localPort).toBe(localPort);
      expect((await call(localPort, 'GET', '/ready')).status).toBe(200);
    } finally {
      await forward.close();
    }
  });

  test('podHttp: one request through a forward of its own', async () => {
    const answer = await podHttp(server.kubeConfig(), {
      namespace: 'mesh-system',
      pod: 'meshd-1',
      port: podPort,
      method: 'POST',
      path: 'debug/config_dump?types=all',
      body: 'x'.repeat(10),
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ method: 'POST', url: '/debug/config_dump?types=all', size: 10 });
  });

  test('a missing pod, a pod not running, and a refused pod port, worded as the reference', async () => {
    const kc = server.kubeConfig();
    await expect(forwardToPod(kc, { namespace: 'mesh-system', pod: 'nope', port: 15000 })).rejects.toThrow(
      /^failure running port forward process: pods "nope" not found$/,
    );
    await expect(forwardToPod(kc, { namespace: 'mesh-system', pod: 'starting', port: 15000 })).rejects.toThrow(
      /^failure running port forward process: pod is not running\. Status=Pending$/,
    );
    const refused = podHttp(kc, { namespace: 'mesh-system', pod: 'refusing', port: refusedPort, method: 'GET', path: '/config_dump' });
    await expect(refused).rejects.toMatchObject({
      code: 'port-forward-failed',
      message: expect.stringMatching(
        new RegExp(
          `^failure running port forward process: an error occurred forwarding \\d+ -> ${refusedPort}: error forwarding port ${refusedPort} to pod refusing_mesh-system, uid [0-9a-f-]+: .*connect: connection refused$`,
        ),
      ),
    });
  });
});
