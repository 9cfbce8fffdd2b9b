import { describe, expect, test } from '@jest/globals';
import { analyze, authorizationPolicy, destinationRule, peerAuthentication, pod, service } from '../testing/fixtures.js';
import { denyHttpOnTcpAnalyzer } from './deny-http-on-tcp-analyzer.js';
import { mtlsAnalyzer, workloadMtlsAnalyzer } from './mtls-analyzers.js';
import { portLevelMtlsAnalyzer } from './port-level-mtls-analyzer.js';

const pa = (name: string, namespace: string, mode: string, extra: object = {}): object => peerAuthentication(name, namespace, { mtls: { mode }, ...extra });
const dr = (namespace: string, host: string, mode: string): object => destinationRule('dr', namespace, { host, trafficPolicy: { tls: { mode } } });
const httpbin = service('httpbin', 'foo', { app: 'httpbin' }, [
  { name: 'http', port: 8000, targetPort: 8080 },
  { name: 'tcp-db', port: 5432 },
]);
const httpbinPod = pod('httpbin-1', 'foo', { labels: { app: 'httpbin' } });

describe('auth.MTLSAnalyzer', () => {
  test('mesh-wide STRICT against a DestinationRule DISABLE is reported on both', () => {
    expect(analyze(mtlsAnalyzer, [pa('default', 'mesh-system', 'STRICT'), dr('foo', 'httpbin', 'DISABLE')])).toEqual([
      'Error [MSH0113] (DestinationRule dr.foo) A DestinationRule and Policy are in conflict with regards to mTLS for host httpbin. The DestinationRule "foo/dr" specifies that mTLS must be false but the Policy object "mesh-system/default" specifies STRICT.',
      'Error [MSH0113] (PeerAuthentication default.mesh-system) A DestinationRule and Policy are in conflict with regards to mTLS for host httpbin. The DestinationRule "foo/dr" specifies that mTLS must be false but the Policy object "mesh-system/default" specifies STRICT.',
    ]);
  });

  test('namespace DISABLE against MESH_MUTUAL for a full name, and a wildcard rule covering the namespace', () => {
    expect(analyze(mtlsAnalyzer, [pa('ns', 'foo', 'DISABLE'), dr('bar', 'httpbin.foo.svc.cluster.local', 'MESH_MUTUAL')])).toHaveLength(2);
    expect(analyze(mtlsAnalyzer, [pa('ns', 'foo', 'STRICT'), dr('mesh-system', '*.cluster.local', 'DISABLE')])).toHaveLength(2);
  });

  test.each([
    ['a namespace PERMISSIVE overriding mesh STRICT', [pa('default', 'mesh-system', 'STRICT'), pa('ns', 'foo', 'PERMISSIVE'), dr('foo', 'httpbin', 'DISABLE')]],
    ['STRICT in another namespace', [pa('ns', 'bar', 'STRICT'), dr('foo', 'httpbin', 'DISABLE')]],
    ['STRICT with MESH_MUTUAL', [pa('default', 'mesh-system', 'STRICT'), dr('foo', 'httpbin', 'MESH_MUTUAL')]],
    [
      'a workload policy (left to the workload analyzer)',
      [pa('w', 'foo', 'STRICT', { selector: { matchLabels: { app: 'httpbin' } } }), dr('foo', 'httpbin', 'DISABLE')],
    ],
    ['a custom domain: cluster.local names no namespace of it', [pa('ns', 'foo', 'STRICT'), dr('bar', 'httpbin.foo.svc.cluster.local', 'DISABLE')]],
  ])('%s stays quiet', (name, objects) => {
    const options = name.startsWith('a custom domain') ? { domainSuffix: 'corp.example' } : {};
    expect(analyze(mtlsAnalyzer, objects, options)).toEqual([]);
  });
});

describe('auth.WorkloadMTLSAnalyzer', () => {
  const strictWorkload = pa('w', 'foo', 'STRICT', { selector: { matchLabels: { app: 'httpbin' } } });
  test('a workload STRICT policy selecting the pods of the rule host conflicts with DISABLE', () => {
    expect(analyze(workloadMtlsAnalyzer, [httpbin, httpbinPod, strictWorkload, dr('foo', 'httpbin', 'DISABLE')])).toHaveLength(2);
  });
  test('a port-level PERMISSIVE on every port, or a policy selecting other pods, stays quiet', () => {
    const permissive = pa('w', 'foo', 'STRICT', {
      selector: { matchLabels: { app: 'httpbin' } },
      portLevelMtls: { '8080': { mode: 'PERMISSIVE' }, '5432': { mode: 'PERMISSIVE' } },
    });
    expect(analyze(workloadMtlsAnalyzer, [httpbin, httpbinPod, permissive, dr('foo', 'httpbin', 'DISABLE')])).toEqual([]);
    const other = pa('w', 'foo', 'STRICT', { selector: { matchLabels: { app: 'other' } } });
    expect(analyze(workloadMtlsAnalyzer, [httpbin, httpbinPod, other, dr('foo', 'httpbin', 'DISABLE')])).toEqual([]);
  });
});

describe('peerauthentication.PortLevelMtlsAnalyzer', () => {
  const withPorts = (ports: Record<string, object>): object =>
    pa('w', 'foo', 'STRICT', { selector: { matchLabels: { app: 'httpbin' } }, portLevelMtls: ports });
  test('target ports of the selecting Services stay quiet; a service port that is not a target port is reported', () => {
    expect(analyze(portLevelMtlsAnalyzer, [httpbin, httpbinPod, withPorts({ '8080': { mode: 'DISABLE' }, '5432': { mode: 'DISABLE' } })])).toEqual([]);
    expect(analyze(portLevelMtlsAnalyzer, [httpbin, httpbinPod, withPorts({ '8000': { mode: 'DISABLE' } })])).toEqual([
      'Warning [MSH1004] (PeerAuthentication w.foo) spec.portLevelMtls["8000"]: port 8000 is not a target port of any service selecting these workloads; portLevelMtls only applies to ports bound to a service, so this entry is ignored',
    ]);
  });
  test('a selector matching no pod is left to the selector analyzer', () => {
    expect(analyze(portLevelMtlsAnalyzer, [httpbin, withPorts({ '9999': { mode: 'DISABLE' } })])).toEqual([]);
  });
});

describe('authorizationpolicy.DenyHttpOnTcpAnalyzer', () => {
  const deny = (rules: object[], extra: object = {}): object =>
    authorizationPolicy('deny', 'foo', { action: 'DENY', selector: { matchLabels: { app: 'httpbin' } }, rules, ...extra });
  test('a DENY on paths for a workload with a TCP port is reported with the port', () => {
    expect(
      analyze(denyHttpOnTcpAnalyzer, [
        httpbin,
        httpbinPod,
        deny([{ to: [{ operation: { paths: ['/admin'] } }], when: [{ key: 'request.headers[x-a]', values: ['1'] }] }]),
      ]),
    ).toEqual([
      'Warning [MSH1005] (AuthorizationPolicy deny.foo) DENY rule 0 uses HTTP-only fields [paths, request.headers[x-a]] but applies to TCP port 5432 (Service httpbin.foo): on TCP those fields are dropped and the rule denies every connection its other fields match',
    ]);
  });
  test.each([
    ['a rule limited to the HTTP port', [{ to: [{ operation: { paths: ['/admin'], ports: ['8080'] } }] }], 'DENY'],
    ['a rule without HTTP-only fields', [{ from: [{ source: { namespaces: ['bar'] } }] }], 'DENY'],
    ['an ALLOW', [{ to: [{ operation: { paths: ['/admin'] } }] }], 'ALLOW'],
  ])('%s stays quiet', (_case, rules, action) => {
    expect(analyze(denyHttpOnTcpAnalyzer, [httpbin, httpbinPod, deny(rules, { action })])).toEqual([]);
  });
  test('ports that are HTTP or sniffed stay quiet', () => {
    const web = service('httpbin', 'foo', { app: 'httpbin' }, [
      { name: 'http', port: 8000, targetPort: 8080 },
      { name: 'admin', port: 9000 },
    ]);
    expect(analyze(denyHttpOnTcpAnalyzer, [web, httpbinPod, deny([{ to: [{ operation: { methods: ['POST'] } }] }])])).toEqual([]);
  });
});
