import { credentials, Metadata } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../../runtime/index.js';
import { waitFor } from '../../testing/wait-for.js';
import { loadEnvoyProtos } from '../../xds/envoy/envoy-protos.js';
import { CLUSTER_TYPE, NAME_TABLE_TYPE } from '../../xds/envoy/type-urls.js';
import type { Generator } from '../../xds/generator.js';
import {
  newAdsTestClient,
  nodeFor,
  startTestXds,
  worldGenerators,
  type AdsTestClient,
  type TestXds,
  type WorldSnapshot,
} from '../../xds/testing/test-support.js';
import { newXdsProxy, type XdsProxy } from './xds-proxy.js';

// The agent's own subscription (the DNS name table) on the proxy's stream, through the real xDS
// server: asked after the proxy's first request, answered by the agent (ACK or NACK), and never
// relayed to the proxy; state of the world and delta alike.
const protos = loadEnvoyProtos();
const NameTable = protos.lookupType('mesh.networking.nds.v1.NameTable');
let address = '10.96.0.1';
let refusal: string | undefined;
const tables: string[][] = [];
const tableGenerator: Generator<WorldSnapshot> = {
  typeUrl: NAME_TABLE_TYPE,
  generate: () => ({ resources: [{ name: '', resource: { table: { 'db.ns.svc.cluster.local': { ips: [address], registry: 'Kubernetes' } } } }] }),
};

let upstream: TestXds;
let proxy: XdsProxy;
let client: AdsTestClient;

beforeAll(async () => {
  upstream = await startTestXds(protos, { generators: [...worldGenerators(), tableGenerator] });
  upstream.world.clusters = { 'outbound|80||a.ns.svc.cluster.local': [{ address: '127.0.0.1', port: 9 }] };
  await upstream.sync();
  proxy = newXdsProxy({
    listen: '127.0.0.1:0',
    upstream: `127.0.0.1:${upstream.port}`,
    credentials: credentials.createInsecure(),
    metadata: async () => new Metadata(),
    log: newNopLogger('adsc'),
    agentSubscriptions: {
      protos: () => protos,
      subscriptions: [
        {
          typeUrl: NAME_TABLE_TYPE,
          onResources(resources) {
            const table = NameTable.toObject(NameTable.decode(resources[0]?.value ?? new Uint8Array()), { arrays: true }) as {
              table: Record<string, { ips: string[] }>;
            };
            tables.push(Object.values(table.table).flatMap((info) => info.ips));
            return refusal;
          },
        },
      ],
    },
  });
  client = newAdsTestClient(protos, await proxy.start());
});

afterAll(async () => {
  client?.close();
  await proxy?.stop();
  await upstream?.close();
});

const tableWatch = (pod: string) => upstream.discovery.findConnection(`${pod}.ns`)?.watch(NAME_TABLE_TYPE);

describe.each(['sotw', 'delta'] as const)('the agent subscription on a %s stream', (flavour) => {
  test('is asked after the proxy first request, ACKed by the agent, and kept from the proxy', async () => {
    const pod = `app-${flavour}`;
    tables.length = 0;
    address = '10.96.0.1';
    refusal = undefined;
    const stream = client[flavour]();
    const first = flavour === 'sotw' ? { resource_names: [] } : { resource_names_subscribe: [] };
    stream.send({ node: nodeFor(pod, 'ns'), type_url: CLUSTER_TYPE, ...first });
    expect((await stream.next(5_000)).type_url).toBe(CLUSTER_TYPE);
    await waitFor(() => tables.length === 1, { description: 'the first name table at the agent' });
    expect(tables[0]).toEqual(['10.96.0.1']);
    await waitFor(() => tableWatch(pod)?.nonceAcked !== undefined && tableWatch(pod)?.nonceAcked === tableWatch(pod)?.nonceSent, {
      description: 'the agent ACK',
    });

    // A change: the new table reaches the agent; the proxy still gets only its own types.
    address = '10.96.0.2';
    upstream.push();
    await waitFor(() => tables.length === 2, { description: 'the second name table' });
    expect(tables[1]).toEqual(['10.96.0.2']);

    // A table the agent refuses is NACKed with its reason.
    refusal = 'the table is bad';
    address = '10.96.0.3';
    upstream.push();
    await waitFor(() => tableWatch(pod)?.lastError === 'the table is bad', { description: 'the agent NACK at the daemon' });
    while (stream.buffered() > 0) expect((await stream.next()).type_url).not.toBe(NAME_TABLE_TYPE);
    stream.cancel();
  });
});
