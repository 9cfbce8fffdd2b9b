import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newMetrics, newNopLogger, type MeshMetrics } from '../../runtime/index.js';
import { dig } from '../../testing/dig.js';
import { histogramCount, metricValue } from '../../xds/testing/test-support.js';
import { newDnsProxy, type DnsProxy } from './dns-proxy.js';
import { buildLookupTable, type NameTableMessage } from './lookup-table.js';
import { startUpstreamDnsServer, type UpstreamDnsServer } from './testing/upstream-dns-server.js';

// The agent's DNS proxy on real UDP and TCP sockets, asked with the real dig: names of the table
// answered by the proxy, the rest by the upstream resolver, as the reference's agent does.
const HOST = '127.0.0.1';
const SEARCH = ['foo.svc.cluster.local', 'svc.cluster.local', 'cluster.local'];
const MANY_IPS = Array.from({ length: 60 }, (_, i) => `240.0.1.${i + 1}`);
const TABLE: NameTableMessage = {
  table: {
    'httpbin.foo.svc.cluster.local': { ips: ['10.96.0.10'], registry: 'Kubernetes', shortname: 'httpbin', namespace: 'foo' },
    'ratings.bar.svc.cluster.local': { ips: ['10.96.0.20'], registry: 'Kubernetes', shortname: 'ratings', namespace: 'bar' },
    'db-0.db.foo.svc.cluster.local': { ips: ['10.0.3.10'], registry: 'Kubernetes', shortname: 'db-0.db', namespace: 'foo' },
    'api.payments.example': { ips: ['240.0.0.1', '2001:db8::1'], registry: 'External' },
    '*.wild.example': { ips: ['240.0.0.2'], registry: 'External' },
    'many.example': { ips: MANY_IPS, registry: 'External' },
  },
};

let upstream: UpstreamDnsServer;
let proxy: DnsProxy;
let metrics: MeshMetrics<'pilot-agent'>;
let server: { host: string; port: number };

beforeAll(async () => {
  upstream = await startUpstreamDnsServer(HOST, [
    { type: 'A', name: 'www.example.com', ttl: 300, class: 'IN', data: '93.184.216.34' },
    { type: 'TXT', name: 'httpbin.foo.svc.cluster.local', ttl: 300, class: 'IN', data: 'from upstream' },
  ]);
  metrics = newMetrics('pilot-agent');
  proxy = newDnsProxy({
    listen: { host: HOST, port: 0 },
    upstreams: () => [{ host: HOST, port: upstream.port }],
    forwardTimeoutMs: 2_000,
    log: newNopLogger('dns'),
    metrics,
  });
  server = { host: HOST, port: await proxy.start() };
});

afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

describe('the agent DNS proxy', () => {
  test('before the first name table it answers SERVFAIL and says why it is not ready', async () => {
    expect(proxy.notReady()).toBe('DNS lookup table is not ready yet');
    expect((await dig(server, 'httpbin.foo.svc.cluster.local')).status).toBe('SERVFAIL');
    expect(upstream.asked).toEqual([]);
    proxy.update(buildLookupTable(TABLE, { proxyNamespace: 'foo', proxyDomain: 'foo.svc.cluster.local', searchDomains: SEARCH }));
    expect(proxy.notReady()).toBeUndefined();
  });

  test.each([
    ['the full name', 'httpbin.foo.svc.cluster.local', 'httpbin.foo.svc.cluster.local.', '10.96.0.10'],
    ['the short name, in the proxy namespace', 'httpbin', 'httpbin.', '10.96.0.10'],
    ['name.namespace', 'ratings.bar', 'ratings.bar.', '10.96.0.20'],
    ['name.namespace.svc', 'ratings.bar.svc', 'ratings.bar.svc.', '10.96.0.20'],
    ['a headless Service pod by hostname.subdomain', 'db-0.db', 'db-0.db.', '10.0.3.10'],
    ['upper case', 'HTTPBIN.FOO.SVC.CLUSTER.LOCAL', 'httpbin.foo.svc.cluster.local.', '10.96.0.10'],
    ['a ServiceEntry host', 'api.payments.example', 'api.payments.example.', '240.0.0.1'],
    ['a name under a wildcard host', 'v1.wild.example', 'v1.wild.example.', '240.0.0.2'],
  ])('%s: an authoritative answer from the table, over UDP and TCP', async (_case, name, owner, address) => {
    for (const tcp of [false, true]) {
      const result = await dig(server, name, 'A', { tcp });
      expect(result.status).toBe('NOERROR');
      expect(result.flags).toContain('aa');
      expect(result.answers).toEqual([{ name: owner, ttl: 30, type: 'A', data: address }]);
    }
  });

  test('the name under the first search domain is a CNAME chained with the records', async () => {
    const result = await dig(server, 'api.payments.example.foo.svc.cluster.local');
    expect(result.answers).toEqual([
      { name: 'api.payments.example.foo.svc.cluster.local.', ttl: 30, type: 'CNAME', data: 'api.payments.example.' },
      { name: 'api.payments.example.', ttl: 30, type: 'A', data: '240.0.0.1' },
    ]);
  });

  test('a known name without a record of the asked type: NOERROR and no answer, never NXDOMAIN', async () => {
    const result = await dig(server, 'httpbin.foo.svc.cluster.local', 'AAAA');
    expect(result.status).toBe('NOERROR');
    expect(result.answers).toEqual([]);
    expect((await dig(server, 'api.payments.example', 'AAAA')).answers).toEqual([
      { name: 'api.payments.example.', ttl: 30, type: 'AAAA', data: '2001:db8::1' },
    ]);
  });

  test.each([
    ['a name the table does not know', 'www.example.com', 'A', 'NOERROR', [{ name: 'www.example.com.', ttl: 300, type: 'A', data: '93.184.216.34' }]],
    [
      'a type the table does not answer',
      'httpbin.foo.svc.cluster.local',
      'TXT',
      'NOERROR',
      [{ name: 'httpbin.foo.svc.cluster.local.', ttl: 300, type: 'TXT', data: '"from upstream"' }],
    ],
    ['a look-alike: a mesh name under another domain', 'httpbin.foo.svc.cluster.local.evil.example', 'A', 'NXDOMAIN', []],
    ['a look-alike: a longer first label', 'xhttpbin.foo.svc.cluster.local', 'A', 'NXDOMAIN', []],
    ['a short name of another namespace', 'ratings', 'A', 'NXDOMAIN', []],
  ])('%s goes upstream and comes back as the upstream answered', async (_case, name, type, status, answers) => {
    const before = await metricValue(metrics, 'dns_upstream_requests_total');
    const result = await dig(server, name, type);
    expect(result.status).toBe(status);
    expect(result.flags).not.toContain('aa');
    expect(result.answers).toEqual(answers);
    expect(upstream.asked).toContain(`${name} ${type}`);
    expect(await metricValue(metrics, 'dns_upstream_requests_total')).toBe(before + 1);
  });

  test('an answer too big for 512 bytes of UDP is truncated (TC), and whole over TCP', async () => {
    const udp = await dig(server, 'many.example', 'A', { noEdns: true, ignoreTruncation: true });
    expect(udp.flags).toContain('tc');
    expect(udp.answers.length).toBeLessThan(MANY_IPS.length);
    const tcp = await dig(server, 'many.example', 'A', { tcp: true });
    expect(tcp.answers.map((answer) => answer.data).sort()).toEqual([...MANY_IPS].sort());
  });

  test('counts every query, and each upstream exchange with its duration', async () => {
    const requests = await metricValue(metrics, 'dns_requests_total');
    const forwarded = await metricValue(metrics, 'dns_upstream_requests_total');
    const timed = await histogramCount(metrics, 'dns_upstream_request_duration_seconds');
    await dig(server, 'httpbin');
    await dig(server, 'www.example.com');
    expect(await metricValue(metrics, 'dns_requests_total')).toBe(requests + 2);
    expect(await metricValue(metrics, 'dns_upstream_requests_total')).toBe(forwarded + 1);
    expect(await histogramCount(metrics, 'dns_upstream_request_duration_seconds')).toBe(timed + 1);
  });
});

describe('the agent DNS proxy without a working upstream', () => {
  test('answers SERVFAIL after trying each upstream, and counts the failure', async () => {
    const local = newMetrics('pilot-agent');
    // A port nothing listens on: UDP gets no answer, TCP is refused.
    const dead = await startUpstreamDnsServer(HOST, []);
    await dead.close();
    const lonely = newDnsProxy({
      listen: { host: HOST, port: 0 },
      upstreams: () => [{ host: HOST, port: dead.port }],
      forwardTimeoutMs: 300,
      log: newNopLogger('dns'),
      metrics: local,
    });
    const port = await lonely.start();
    try {
      lonely.update(buildLookupTable(TABLE, { proxyNamespace: 'foo', proxyDomain: 'foo.svc.cluster.local', searchDomains: [] }));
      expect((await dig({ host: HOST, port }, 'www.example.com', 'A', { tcp: true })).status).toBe('SERVFAIL');
      expect((await dig({ host: HOST, port }, 'httpbin.foo.svc.cluster.local')).status).toBe('NOERROR');
      expect(await metricValue(local, 'dns_upstream_failures_total')).toBe(1);
    } finally {
      await lonely.stop();
    }
  });
});
