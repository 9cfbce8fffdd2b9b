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
  test('two gateways on one workload with one credential are both reported', () => {
    expect(
      analyze(certificateAnalyzer, [
        gw('a', 'foo', [server(443, ['a.example.com'], tls('cert'))]),
        gw('b', 'bar', [server(443, ['b.example.com'], tls('cert'))]),
      ]),
    ).toEqual([
      'Warning [MSH0138] (Gateway a.foo) Duplicate certificate in multiple gateways [bar/b foo/a] may cause 404s if clients re-use HTTP2 connections.',
      'Warning [MSH0138] (Gateway b.bar) Duplicate certificate in multiple gateways [bar/b foo/a] may cause 404s if clients re-use HTTP2 connections.',
    ]);
  });
  test('different credentials, or different workloads, stay quiet', () => {
    expect(
      analyze(certificateAnalyzer, [gw('a', 'foo', [server(443, ['a.example.com'], tls('a'))]), gw('b', 'foo', [server(443, ['b.example.com'], tls('b'))])]),
    ).toEqual([]);
    expect(
      analyze(certificateAnalyzer, [gw('a', 'foo', [server(443, ['*'], tls('c'))]), gw('b', 'foo', [server(443, ['*'], tls('c'))], { mesh: 'other' })]),
    ).toEqual([]);
  });
});

describe('gateway.ConflictingGatewayAnalyzer', () => {
  test('same selector, port and an overlapping host conflict', () => {
    expect(
      analyze(conflictingGatewayAnalyzer, [gw('a', 'foo', [server(80, ['*.example.com'])]), gw('b', 'bar', [server(80, ['bar/api.example.com'])])]),
    ).toEqual([
      'Error [MSH0145] (Gateway a.foo) Conflict with gateways bar/b (workload selector mesh=ingressgateway, port 80, hosts bar/api.example.com).',
      'Error [MSH0145] (Gateway b.bar) Conflict with gateways foo/a (workload selector mesh=ingressgateway, port 80, hosts *.example.com).',
    ]);
  });
  test.each([
    ['other hosts', [gw('a', 'foo', [server(80, ['a.example.com'])]), gw('b', 'foo', [server(80, ['b.example.com'])])]],
    ['other ports', [gw('a', 'foo', [server(80)]), gw('b', 'foo', [server(81)])]],
    ['other selectors', [gw('a', 'foo', [server(80)]), gw('b', 'foo', [server(80)], { mesh: 'other' })]],
  ])('%s stay quiet', (_case, objects) => {
    expect(analyze(conflictingGatewayAnalyzer, objects)).toEqual([]);
  });
});
