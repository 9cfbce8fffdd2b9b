import { describe, expect, test } from '@jest/globals';
import { analyze, gateway, pod, service } from '../testing/fixtures.js';
import { certificateAnalyzer, conflictingGatewayAnalyzer } from './gateway-config-analyzers.js';
import { ingressGatewayPortAnalyzer } from './gateway-workload-analyzers.js';

const server = (number: number, hosts: string[] = ['*'], tls?: object): object => ({
  port: { number, name: `p${number}`, protocol: tls ? 'HTTPS' : 'HTTP' },
  hosts,
  ...(tls ? { tls } : {}),
});
const gw = (name: string, namespace: string, servers: object[], selector: Record<string, string> = { mesh: 'ingressgateway' }): object =>
  gateway(name, namespace, { selector, servers });
const gatewayPod = pod('ingress-1', 'mesh-system', {
  labels: { mesh: 'ingressgateway' },
  containers: [{ name: 'mesh-proxy', ports: [{ containerPort: 8080 }, { containerPort: 8443 }, { containerPort: 15021 }] }],
});
const gatewayService = service('ingress', 'mesh-system', { mesh: 'ingressgateway' }, [
  { name: 'http2', port: 80, targetPort: 8080 },
  { name: 'https', port: 443, targetPort: 8443 },
]);

describe('gateway.IngressGatewayPortAnalyzer', () => {
  test('target ports of the gateway Service stay quiet, from a Gateway of any namespace', () => {
    expect(analyze(ingressGatewayPortAnalyzer, [gatewayPod, gatewayService, gw('g', 'foo', [server(8080), server(8443)])])).toEqual([]);
  });
  test('a Service port (not only a target port) stays quiet, as the reference accepts both', () => {
    expect(analyze(ingressGatewayPortAnalyzer, [gatewayPod, gatewayService, gw('g', 'foo', [server(80), server(443)])])).toEqual([]);
  });
  test('a port on the pods but not the Service and a port on neither are both MSH0162; a selector matching nothing MSH0101', () => {
    const notOnService = (port: number): string =>
      `Warning [MSH0162] (Gateway g.foo) The gateway is listening on a target port (port ${port}) that is not defined in the Service associated with its workload instances (Pod selector mesh=ingressgateway). If you need to access the gateway port through the gateway Service, it will not be available.`;
    expect(
      analyze(ingressGatewayPortAnalyzer, [
        gatewayPod,
        gatewayService,
        gw('g', 'foo', [server(15021), server(81)]),
        gw('none', 'foo', [server(8080)], { mesh: 'egress' }),
      ]),
    ).toEqual(['Error [MSH0101] (Gateway none.foo) Referenced selector not found: "mesh=egress"', notOnService(15021), notOnService(81)]);
  });
});

describe('gateway.CertificateAnalyzer', () => {
  const tls = (credentialName: string): object => ({ mode: 'SIMPLE', credentialName });
  const duplicate = (gateway: string, names: string): string =>
    `Warning [MSH0138] (Gateway ${gateway}) Duplicate certificate in multiple gateways [${names}] may cause 404s if clients re-use HTTP2 connections.`;
  test('equal selectors and one credential: each gateway is reported, naming itself first', () => {
    expect(
      analyze(certificateAnalyzer, [
        gw('a', 'foo', [server(443, ['a.example.com'], tls('cert'))]),
        gw('b', 'bar', [server(443, ['b.example.com'], tls('cert'))]),
      ]),
    ).toEqual([duplicate('a.foo', 'foo/a bar/b'), duplicate('b.bar', 'bar/b foo/a')]);
  });
  test('only the gateway with the broader selector (or none) is reported', () => {
    expect(
      analyze(certificateAnalyzer, [
        gw('broad', 'foo', [server(443, ['a.example.com'], tls('cert'))]),
        gw('narrow', 'foo', [server(443, ['b.example.com'], tls('cert'))], { mesh: 'ingressgateway', zone: 'a' }),
        gw('all', 'foo', [server(8443, ['c.example.com'], tls('cert'))], {}),
      ]),
    ).toEqual([duplicate('all.foo', 'foo/all foo/broad'), duplicate('all.foo', 'foo/all foo/narrow'), duplicate('broad.foo', 'foo/broad foo/narrow')]);
  });
  test('the same certificate and key files count too', () => {
    const files = { mode: 'SIMPLE', serverCertificate: '/etc/certs/cert.pem', privateKey: '/etc/certs/key.pem' };
    expect(
      analyze(certificateAnalyzer, [
        gw('a', 'foo', [server(443, ['*'], files)]),
        gw('b', 'foo', [server(443, ['*'], files)], { mesh: 'ingressgateway', x: 'y' }),
      ]),
    ).toEqual([duplicate('a.foo', 'foo/a foo/b')]);
  });
  test.each([
    ['different credentials', [gw('a', 'foo', [server(443, ['a.example.com'], tls('a'))]), gw('b', 'foo', [server(443, ['b.example.com'], tls('b'))])]],
    ['different workloads', [gw('a', 'foo', [server(443, ['*'], tls('c'))]), gw('b', 'foo', [server(443, ['*'], tls('c'))], { mesh: 'other' })]],
    [
      'one credential name, the other certificate files',
      [
        gw('a', 'foo', [server(443, ['*'], tls('c'))]),
        gw('b', 'foo', [server(443, ['*'], { mode: 'SIMPLE', serverCertificate: '/c.pem', privateKey: '/k.pem' })]),
      ],
    ],
  ])('%s stay quiet', (_case, objects) => {
    expect(analyze(certificateAnalyzer, objects)).toEqual([]);
  });
});

describe('gateway.ConflictingGatewayAnalyzer', () => {
  const conflict = (gateway: string, others: string, hosts: string, selector = 'mesh=ingressgateway'): string =>
    `Error [MSH0145] (Gateway ${gateway}) Conflict with gateways ${others} (workload selector ${selector}, port 80, hosts ${hosts}).`;
  test('same selector, port and host conflict; the message names the gateway’s own hosts', () => {
    expect(
      analyze(conflictingGatewayAnalyzer, [
        gw('a', 'foo', [server(80, ['api.example.com', 'a.example.com'])]),
        gw('b', 'bar', [server(80, ['api.example.com'])]),
        gw('c', 'bar', [server(80, ['api.example.com'])]),
      ]),
    ).toEqual([
      conflict('a.foo', 'bar/b,bar/c', 'api.example.com,a.example.com'),
      conflict('b.bar', 'bar/c,foo/a', 'api.example.com'),
      conflict('c.bar', 'bar/b,foo/a', 'api.example.com'),
    ]);
  });
  test('one selector holding the other conflicts when a pod both select exists', () => {
    const objects = [
      gw('a', 'foo', [server(80, ['api.example.com'])]),
      gw('b', 'foo', [server(80, ['api.example.com'])], { mesh: 'ingressgateway', zone: 'a' }),
    ];
    expect(analyze(conflictingGatewayAnalyzer, objects)).toEqual([]);
    expect(analyze(conflictingGatewayAnalyzer, [...objects, pod('ingress-a', 'mesh-system', { labels: { mesh: 'ingressgateway', zone: 'a' } })])).toEqual([
      conflict('a.foo', 'foo/b', 'api.example.com'),
      conflict('b.foo', 'foo/a', 'api.example.com', 'mesh=ingressgateway,zone=a'),
    ]);
  });
  test.each([
    ['other hosts', [gw('a', 'foo', [server(80, ['a.example.com'])]), gw('b', 'foo', [server(80, ['b.example.com'])])]],
    [
      'overlapping but different hosts, as the reference compares them',
      [gw('a', 'foo', [server(80, ['*.example.com'])]), gw('b', 'foo', [server(80, ['api.example.com'])])],
    ],
    ['other ports', [gw('a', 'foo', [server(80)]), gw('b', 'foo', [server(81)])]],
    ['other selectors', [gw('a', 'foo', [server(80)]), gw('b', 'foo', [server(80)], { mesh: 'other' })]],
    ['other binds', [gw('a', 'foo', [{ ...(server(80) as object), bind: '10.0.0.1' }]), gw('b', 'foo', [server(80)])]],
  ])('%s stay quiet', (_case, objects) => {
    expect(analyze(conflictingGatewayAnalyzer, objects)).toEqual([]);
  });
});
