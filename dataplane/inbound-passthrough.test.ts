import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { curl } from '../testing/curl.js';
import { CLUSTER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources } from './config-state.js';
import { serverClusters, startTwoSidecars, SERVER_PORT, type TwoSidecars } from './testing/two-sidecars-fixture.js';

// PILOT_ENABLE_INBOUND_PASSTHROUGH through real sockets: the server sidecar's inbound clusters as
// the daemon generates them. With passthrough (the default) a request goes on to the address it
// came for (the app's pod address here); without it, to localhost. Two apps share one port, one
// on the pod's app address and one on 127.0.0.1, each answering its name: the real curl through
// both sidecars shows which one the server sidecar reached.
const SUBNET = 96;
const APP_ADDRESS = `127.${SUBNET}.2.2`;

let mesh: TwoSidecars;
let port: number;
let apps: Server[] = [];
let version = 1;

/** A Service of the httpbin pod on `port`: what the two apps serve. */
const localService = (servicePort: number): object => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'local', namespace: 'bar' },
  spec: { clusterIP: '10.96.0.12', selector: { app: 'httpbin' }, ports: [{ name: 'http', port: servicePort, targetPort: servicePort }] },
});

async function listen(name: string, address: string, listenPort: number): Promise<Server> {
  const server = createServer((_, res) => res.end(name));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, address, () => resolve());
  });
  return server;
}

beforeAll(async () => {
  const localhostApp = await listen('localhost', '127.0.0.1', 0);
  port = (localhostApp.address() as AddressInfo).port;
  apps = [localhostApp, await listen('pod address', APP_ADDRESS, port)];
  mesh = await startTwoSidecars({ subnet: SUBNET, mode: 'PERMISSIVE', serverPolicies: [localService(port)], serverPorts: [SERVER_PORT, port] });
});

afterAll(async () => {
  await mesh?.close();
  await Promise.all(apps.map((app) => new Promise((resolve) => app.close(resolve))));
});

function useClusters(inboundPassthrough: boolean): void {
  const clusters = serverClusters('PERMISSIVE', [localService(port)], { inboundPassthrough });
  expect(mesh.serverState.apply(CLUSTER_TYPE, String(++version), keyResources(CLUSTER_TYPE, clusters))).toEqual({ ok: true });
}

const reached = async (): Promise<string> => {
  const answer = await curl(['-x', mesh.proxyUrl, `http://local.bar:${port}/`]);
  expect(answer.code).toBe('200');
  return answer.body;
};

describe('PILOT_ENABLE_INBOUND_PASSTHROUGH', () => {
  test('on (default): the server sidecar passes the request to the address it came for', async () => {
    expect(await reached()).toBe('pod address');
  });

  test('off: it sends it to localhost', async () => {
    useClusters(false);
    expect(await reached()).toBe('localhost');
    useClusters(true);
    expect(await reached()).toBe('pod address');
  });
});
