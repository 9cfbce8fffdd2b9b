import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CoreV1Api, Log, PortForward } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { kubectl } from '../testing/kubectl.js';
import { freePort } from '../testing/wait-for.js';
import { startApiServerDouble } from './index.js';
import type { ApiServerDouble, PodLogLine } from './index.js';
import { expectStatus } from './test-support.js';
import { startHashingEchoServer } from '../testing/hashing-echo-server.js';

// The stand-in for the pods' network: an HTTP server on a loopback address of its own.
const POD_IP = '127.0.0.2';
const REFUSING_IP = '127.0.0.3';
const LOG_START = Date.parse('2026-11-05T10:00:00Z');

/** Answers every request with what it received: method, path and query, the body's size and hash. */
class Collect extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

describe('API server double: pods/portforward, pods/log and pods/proxy', () => {
  let server: ApiServerDouble;
  let echo: Server;
  let echoPort = 0;
  let refusedPort = 0;
  let work = '';
  let kubeconfig = '';
  const logs = new Map<string, string | PodLogLine[]>();
  const run = (...args: string[]) => kubectl({ kubeconfig, home: work }, args);
  const core = () => server.kubeConfig().makeApiClient(CoreV1Api);

  const createPod = async (name: string, containers: string[], status?: Record<string, unknown>) => {
    const api = core();
    await api.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: { nodeName: status ? 'node-1' : undefined, containers: containers.map((c) => ({ name: c, image: 'app', ports: [{ containerPort: echoPort }] })) },
      },
    });
    if (status) await api.replaceNamespacedPodStatus({ name, namespace: 'default', body: { metadata: { name }, spec: { containers: [] }, status } });
  };

  beforeAll(async () => {
    echo = await startHashingEchoServer(POD_IP);
    echoPort = (echo.address() as AddressInfo).port;
    refusedPort = await freePort(REFUSING_IP);
    server = await startApiServerDouble({
      bookmarkIntervalMs: 0,
      // `mapped` is reached on its port 15000 through the resolver; the others by their podIP.
      podResolver: (namespace, pod, port) => (namespace === 'default' && pod === 'mapped' && port === 15000 ? { host: POD_IP, port: echoPort } : undefined),
      podLogs: (namespace, pod, container) => logs.get(`${namespace}/${pod}/${container}`),
    });
    work = await mkdtemp(join(tmpdir(), 'mesh-pod-subresources-'));
    kubeconfig = join(work, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
    await createPod('web', ['app'], { phase: 'Running', podIP: POD_IP, startTime: new Date(LOG_START).toISOString() });
    await createPod('mapped', ['app'], { phase: 'Running', podIP: '10.0.0.9' });
    await createPod('refusing', ['app'], { phase: 'Running', podIP: REFUSING_IP });
    await createPod('two', ['app', 'proxy'], { phase: 'Running', podIP: POD_IP });
    await createPod('pending', ['app']);
    logs.set('default/web/app', 'first line\nsecond line\nthird line\n');
    logs.set('default/two/proxy', [
      { time: LOG_START, text: 'old' },
      { time: Date.now() - 1000, text: 'recent' },
    ]);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await new Promise((resolve) => echo?.close(resolve));
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** One HTTP exchange through client-node's PortForward; what came back on each channel. */
  const forwardOnce = async (pod: string, port: number, request: string) => {
    const output = new Collect();
    const errors = new Collect();
    const input = new PassThrough();
    const ws = (await new PortForward(server.kubeConfig()).portForward('default', pod, [port], output, errors, input)) as unknown as {
      on(e: 'close', f: () => void): void;
    };
    const closed = new Promise<void>((resolve) => ws.on('close', resolve));
    input.write(request);
    await closed;
    return { output: output.text, errors: errors.text };
  };

  test('portforward: client-node PortForward carries an HTTP exchange to the pod, framed per channel', async () => {
    const { output, errors } = await forwardOnce('web', echoPort, 'GET /stats?x=1 HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n');
    expect(errors).toBe('');
    expect(output).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(output.slice(output.indexOf('\r\n\r\n') + 4))).toMatchObject({ method: 'GET', url: '/stats?x=1', size: 0 });
  });

  test('portforward: a large body crosses intact both ways', async () => {
    const body = Buffer.alloc(3 * 1024 * 1024, 'abcdefgh');
    const request = `POST /upload HTTP/1.1\r\nHost: pod\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString('latin1')}`;
    const { output } = await forwardOnce('web', echoPort, request);
    expect(JSON.parse(output.slice(output.indexOf('\r\n\r\n') + 4))).toMatchObject({
      size: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
  });

  test('portforward: the pod resolver decides where a pod port is dialled', async () => {
    const { output } = await forwardOnce('mapped', 15000, 'GET /config_dump HTTP/1.1\r\nHost: pod\r\nConnection: close\r\n\r\n');
    expect(output).toContain('"url":"/config_dump"');
  });

  test('portforward: a refused target port is reported on the error channel, as the kubelet does', async () => {
    const { output, errors } = await forwardOnce('refusing', refusedPort, 'GET / HTTP/1.1\r\n\r\n');
    expect(output).toBe('');
    expect(errors).toMatch(
      new RegExp(
        `^error forwarding port ${refusedPort} to pod refusing_default, uid [0-9a-f-]+: failed to connect to localhost:${refusedPort} inside namespace "default", IPv4: dial tcp ${REFUSING_IP.replace(/\./g, '\\.')}:${refusedPort}: connect: connection refused$`,
      ),
    );
  });

  test('portforward: a missing pod is 404 and a pod not yet scheduled 400, before any upgrade', async () => {
    const attempt = (pod: string) => new PortForward(server.kubeConfig()).portForward('default', pod, [80], new Collect(), new Collect(), new PassThrough());
    await expect(attempt('nope')).rejects.toMatchObject({ message: 'Unexpected server response: 404' });
    await expect(attempt('pending')).rejects.toMatchObject({ message: 'Unexpected server response: 400' });
    // The same refusals as Status bodies, for a plain (not upgraded) request.
    const plain = async (pod: string) => (await fetch(`${server.url}/api/v1/namespaces/default/pods/${pod}/portforward?ports=80`, { method: 'POST' })).json();
    expect(await plain('nope')).toMatchObject({
      kind: 'Status',
      code: 404,
      reason: 'NotFound',
      message: 'pods "nope" not found',
      details: { name: 'nope', kind: 'pods' },
    });
    expect(await plain('web')).toMatchObject({ code: 400, message: 'Upgrade request required' });
  });

  test('portforward: kubectl port-forward (SPDY, tunnelled or not) is refused with a clear reason', async () => {
    const refused = await run('port-forward', 'pod/web', `0:${echoPort}`, '--pod-running-timeout=2s');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'error upgrading connection: SPDY port forwarding (SPDY/3.1) is not supported by the API server double: use a WebSocket client of v4.channel.k8s.io',
    );
  });

  test('log: kubectl logs with --tail, --timestamps and --since, and the container rules', async () => {
    expect((await run('logs', 'web')).stdout).toBe('first line\nsecond line\nthird line\n');
    expect((await run('logs', 'web', '--tail=1')).stdout).toBe('third line\n');
    expect((await run('logs', 'web', '--timestamps', '--tail=2')).stdout).toBe(
      '2026-11-05T10:00:00.000000000Z second line\n2026-11-05T10:00:00.000000000Z third line\n',
    );
    expect((await run('logs', 'two', '-c', 'proxy', '--since=1h')).stdout).toBe('recent\n');
    expect((await run('logs', 'two', '-c', 'app')).stdout).toBe('');
    // A pod no node took yet: an empty log, as the API server answers.
    expect(await run('logs', 'pending')).toMatchObject({ code: 0, stdout: '' });
    const noContainer = await run('logs', 'pod/two', '--all-containers=false', '--default-container=false');
    expect(noContainer.code).not.toBe(0);
    expect((await run('logs', 'web', '--previous')).stderr).toContain('previous terminated container "app" in pod "web" not found');
    const missing = await run('logs', 'nope');
    expect(missing.stderr).toContain('pods "nope" not found');
  });

  test('log: client-node readNamespacedPodLog and Log', async () => {
    expect(await core().readNamespacedPodLog({ name: 'web', namespace: 'default', tailLines: 2 })).toBe('second line\nthird line\n');
    const status = await expectStatus(() => core().readNamespacedPodLog({ name: 'two', namespace: 'default' }));
    expect(status).toMatchObject({ httpCode: 400, message: 'a container name must be specified for pod two, choose one of: [app proxy]' });
    const wrong = await expectStatus(() => core().readNamespacedPodLog({ name: 'web', namespace: 'default', container: 'other' }));
    expect(wrong).toMatchObject({ httpCode: 400, reason: 'BadRequest', message: 'container other is not valid for pod web' });
    const out = new Collect();
    const finished = new Promise((resolve) => out.on('finish', resolve));
    await new Log(server.kubeConfig()).log('default', 'web', 'app', out, { limitBytes: 16 });
    await finished;
    expect(out.text).toBe('first line\nsecon');
  });

  test('log: follow streams what the container writes next', async () => {
    logs.set('default/web/app', 'first line\n');
    const controller = new AbortController();
    const response = await fetch(`${server.url}/api/v1/namespaces/default/pods/web/log?follow=true`, { signal: controller.signal });
    const reader = response.body!.getReader();
    let seen = '';
    const readUntil = async (text: string) => {
      while (!seen.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`log ended before ${text}`);
        seen += Buffer.from(value).toString('utf8');
      }
    };
    await readUntil('first line\n');
    logs.set('default/web/app', 'first line\nlater line\n');
    await readUntil('later line\n');
    controller.abort();
    expect(seen).toBe('first line\nlater line\n');
    logs.set('default/web/app', 'first line\nsecond line\nthird line\n');
  });

  test('proxy: kubectl get --raw reaches the pod with the path and query, without the caller credentials', async () => {
    const answer = await run('get', '--raw', `/api/v1/namespaces/default/pods/web:${echoPort}/proxy/debug/syncz?resource=a`);
    expect(JSON.parse(answer.stdout)).toEqual({
      method: 'GET',
      url: '/debug/syncz?resource=a',
      size: 0,
      sha256: createHash('sha256').digest('hex'),
      authorization: null,
    });
    // Without a port, the first container port.
    expect(JSON.parse((await run('get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/')).stdout)).toMatchObject({ url: '/' });
    const refused = await run('get', '--raw', `/api/v1/namespaces/default/pods/refusing:${refusedPort}/proxy/`);
    expect(refused.stderr).toContain(
      `Error from server (ServiceUnavailable): error trying to reach service: dial tcp ${REFUSING_IP}:${refusedPort}: connect: connection refused`,
    );
    expect((await run('get', '--raw', '/api/v1/namespaces/default/pods/nope:80/proxy/')).stderr).toContain('pods "nope" not found');
    expect((await run('get', '--raw', '/api/v1/namespaces/default/pods/pending:80/proxy/')).stderr).toContain(
      'Error from server (BadRequest): address not allowed',
    );
  });

  test('proxy: client-node, any method, the body streamed', async () => {
    const api = core();
    const got = await api.connectGetNamespacedPodProxyWithPath({ name: `web:${echoPort}`, namespace: 'default', path: 'stats/prometheus' });
    // client-node parses the JSON the pod answered.
    expect(typeof got === 'string' ? JSON.parse(got) : got).toMatchObject({ method: 'GET', url: '/stats/prometheus' });
    const body = Buffer.alloc(2 * 1024 * 1024 + 3, 'xyz');
    const posted = await fetch(`${server.url}/api/v1/namespaces/default/pods/web:${echoPort}/proxy/logging?level=debug`, { method: 'POST', body });
    expect(posted.status).toBe(200);
    expect(posted.headers.get('x-echo')).toBe('yes');
    expect(await posted.json()).toMatchObject({
      method: 'POST',
      url: '/logging?level=debug',
      size: body.length,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
  });
});
