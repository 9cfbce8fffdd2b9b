import { credentials } from '@grpc/grpc-js';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { selfSignedCertificate } from '../testing/openssl.js';
import { waitFor } from '../testing/wait-for.js';
import { loadEnvoyProtos } from '../xds/envoy/envoy-protos.js';
import { jsonToStruct } from '../xds/envoy/struct-json.js';
import type { Generator } from '../xds/generator.js';
import { serviceKey, startTestXds, worldGenerators, type TestXds, type WorldSnapshot } from '../xds/testing/test-support.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE, SECRET_TYPE } from '../xds/envoy/type-urls.js';
import { newAdsSecrets, type AdsSecrets } from './ads-secrets.js';
import { newConfigState, type ConfigState } from './config-state.js';
import { newXdsSubscriber, type XdsSubscriber } from './xds-subscriber.js';

const A = 'outbound|80||a.ns.svc.cluster.local';
const B = 'outbound|80||b.ns.svc.cluster.local';
const GATEWAY_SECRET = 'kubernetes://gw-cert';

/** The test world's generators; a world with secrets has cluster A present its `kubernetes://` ones, over ADS. */
function generators(): Generator<WorldSnapshot>[] {
  return worldGenerators().map((generator) => {
    if (generator.typeUrl !== CLUSTER_TYPE) return generator;
    return {
      typeUrl: CLUSTER_TYPE,
      generate(proxy, world, request) {
        const result = generator.generate(proxy, world, request);
        const secrets = Object.keys(world.secrets).filter((name) => name.startsWith('kubernetes://'));
        if (!result || secrets.length === 0) return result;
        return {
          resources: result.resources.map((named) => {
            if (named.name !== A) return named;
            const cluster = typeof named.resource === 'function' ? (named.resource as () => object)() : named.resource;
            const context = {
              common_tls_context: {
                tls_certificate_sds_secret_configs: secrets.map((name) => ({ name, sds_config: { ads: {}, resource_api_version: 'V3' } })),
              },
            };
            return {
              name: named.name,
              resource: {
                ...cluster,
                transport_socket: {
                  name: 'envoy.transport_sockets.tls',
                  typed_config: { '@type': 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext', ...context },
                },
              },
            };
          }),
        };
      },
    };
  });
}

let env: TestXds;
let dir: string;
let pem: { cert: string; key: string; otherCert: string; otherKey: string };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mesh-xds-subscriber-'));
  const [one, other] = await Promise.all([selfSignedCertificate(dir, 'one', 'DNS:gw.example.com'), selfSignedCertificate(dir, 'other', 'DNS:gw.example.com')]);
  pem = {
    cert: await readFile(one.certFile, 'utf8'),
    key: await readFile(one.keyFile, 'utf8'),
    otherCert: await readFile(other.certFile, 'utf8'),
    otherKey: await readFile(other.keyFile, 'utf8'),
  };
  env = await startTestXds(loadEnvoyProtos(), { generators: generators() });
});

afterAll(async () => {
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

describe.each([
  ['state of the world', false],
  ['delta', true],
] as const)('the data plane xDS subscriber against our ADS server (%s)', (_flavour, delta) => {
  const pod = delta ? 'dp-delta' : 'dp-sotw';
  let state: ConfigState;
  let adsSecrets: AdsSecrets;
  let subscriber: XdsSubscriber;
  const connection = () => env.discovery.findConnection(`${pod}.ns`);

  beforeAll(async () => {
    env.world.clusters = { [A]: [{ address: '127.0.0.1', port: 9 }], [B]: [{ address: '127.0.0.3', port: 9 }] };
    env.world.listeners = {};
    env.world.secrets = {};
    await env.sync();
    state = newConfigState();
    adsSecrets = newAdsSecrets();
    subscriber = newXdsSubscriber({
      protos: env.discovery.protos,
      target: `127.0.0.1:${env.port}`,
      credentials: credentials.createInsecure(),
      node: { id: `sidecar~127.0.0.1~${pod}.ns~ns.svc.cluster.local`, metadata: jsonToStruct({ NAMESPACE: 'ns' }), locality: { region: 'r' } },
      state,
      log: newNopLogger('xds'),
      adsSecrets,
      delta,
    });
    subscriber.start();
  });

  afterAll(async () => {
    subscriber?.close();
    await waitFor(() => connection() === undefined, { description: 'the stream closed' });
  });

  test("subscribes as Envoy does: CDS and LDS, then EDS by the clusters' names; every type ACKed", async () => {
    await waitFor(() => subscriber.isSynced() && state.current().resources.endpoints.size === 2, { description: 'clusters, endpoints and listeners accepted' });
    const con = connection();
    expect(con?.kind).toBe(delta ? 'delta' : 'sotw');
    expect(con?.watches.get(ENDPOINT_TYPE)?.names).toEqual([A, B]);
    await waitFor(
      () =>
        [CLUSTER_TYPE, ENDPOINT_TYPE, LISTENER_TYPE].every((type) => {
          const watch = con?.watches.get(type);
          return watch !== undefined && watch.nonceSent !== '' && watch.nonceAcked === watch.nonceSent;
        }),
      { description: 'all ACKed' },
    );
  });

  test('a listener the data plane cannot implement is NACKed with the field named; the last good config stays', async () => {
    env.world.listeners = { 'a.ns.svc.cluster.local:80': A };
    env.push();
    await waitFor(() => (connection()?.watches.get(LISTENER_TYPE)?.lastError ?? '') !== '', { description: 'NACK recorded by the server' });
    expect(connection()?.watches.get(LISTENER_TYPE)?.lastError).toContain('api_listener');
    expect(state.rejections().get(LISTENER_TYPE)).toContain('Listener a.ns.svc.cluster.local:80: api_listener');
    expect(state.current().resources.listeners).toEqual([]);
    expect(state.current().resources.clusters.size).toBe(2);
    env.world.listeners = {};
  });

  test('an endpoint change reaches the data plane over EDS', async () => {
    env.world.clusters[A] = [{ address: '127.0.0.2', port: 10 }];
    env.push({ full: false, configsUpdated: [serviceKey(A)], reason: 'endpoint' });
    await waitFor(() => JSON.stringify(state.current().resources.endpoints.get(A) ?? {}).includes('127.0.0.2'), { description: 'new endpoint' });
    expect(JSON.stringify(state.current().resources.endpoints.get(B))).toContain('127.0.0.3');
  });

  test('secrets over the ADS stream: taken when a cluster asks for them; a bad one is NACKed and the last good one serves', async () => {
    env.world.secrets = { [GATEWAY_SECRET]: { cert: pem.cert, key: pem.key } };
    env.push();
    await waitFor(() => adsSecrets.merged(undefined).certificates.get(GATEWAY_SECRET)?.certificateChain === pem.cert, { description: 'the secret taken' });
    env.world.secrets = { [GATEWAY_SECRET]: { cert: pem.otherCert, key: pem.key } };
    env.push();
    await waitFor(() => (connection()?.watches.get(SECRET_TYPE)?.lastError ?? '').includes('does not match'), { description: 'NACK recorded by the server' });
    expect(adsSecrets.merged(undefined).certificates.get(GATEWAY_SECRET)?.certificateChain).toBe(pem.cert);
    env.world.secrets = { [GATEWAY_SECRET]: { cert: pem.otherCert, key: pem.otherKey } };
    env.push();
    await waitFor(() => adsSecrets.merged(undefined).certificates.get(GATEWAY_SECRET)?.certificateChain === pem.otherCert, {
      description: 'the rotated secret taken',
    });
  });

  test('a cluster gone: removed from the config, its EDS name unsubscribed and its endpoints dropped', async () => {
    delete env.world.clusters[B];
    env.push();
    await waitFor(() => !state.current().resources.clusters.has(B), { description: 'cluster B removed' });
    await waitFor(() => connection()?.watches.get(ENDPOINT_TYPE)?.names.join() === A, { description: 'B unsubscribed' });
    expect([...state.current().resources.endpoints.keys()]).toEqual([A]);
    expect([...state.current().resources.clusters.keys()]).toEqual([A]);
  });
});
