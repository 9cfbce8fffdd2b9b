import { describe, expect, test } from '@jest/globals';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { analyze, authorizationPolicy, namespace, peerAuthentication, service, pod, requestAuthentication } from '../testing/fixtures.js';
import { authorizationPoliciesAnalyzer, extensionProviderAnalyzer, serviceAccountAnalyzer } from './authorization-policies-analyzer.js';
import { WORKLOAD_SELECTOR_ANALYZERS } from './workload-selector-analyzers.js';

const allowFrom = (source: object, extra: object = {}): object => ({ action: 'ALLOW', rules: [{ from: [{ source }] }], ...extra });
const namespaces = [namespace('foo'), namespace('bar')];

describe('auth.AuthorizationPoliciesAnalyzer', () => {
  test('namespaces, principals and service accounts of existing namespaces, and wildcards, stay quiet', () => {
    const policy = authorizationPolicy('p', 'foo', {
      rules: [
        {
          from: [
            { source: { namespaces: ['bar', 'ba*'], principals: ['spiffe://cluster.local/ns/bar/sa/sleep', 'cluster.local/ns/foo/sa/*', '*'] } },
            { source: { serviceAccounts: ['bar/sleep', 'sleep'] } },
          ],
        },
        { when: [{ key: 'source.namespace', values: ['foo'] }] },
      ],
    });
    expect(analyze(authorizationPoliciesAnalyzer, [...namespaces, policy])).toEqual([]);
  });

  test('a namespace named in namespaces or notNamespaces that does not exist is reported, a wildcard matching none too', () => {
    const policy = authorizationPolicy('p', 'foo', {
      rules: [
        { from: [{ source: { namespaces: ['gone', 'qux*'] } }, { source: { notNamespaces: ['gone', '*-prod'] } }] },
        { from: [{ source: { namespaces: ['FOO', 'f*', '*ar'] } }] },
      ],
    });
    expect(analyze(authorizationPoliciesAnalyzer, [...namespaces, policy])).toEqual([
      'Error [MSH0101] (AuthorizationPolicy p.foo) Referenced namespace not found: "*-prod"',
      'Error [MSH0101] (AuthorizationPolicy p.foo) Referenced namespace not found: "gone"',
      'Error [MSH0101] (AuthorizationPolicy p.foo) Referenced namespace not found: "qux*"',
    ]);
  });

  test('namespaces named only inside principals, service accounts or conditions are not this check’s', () => {
    const policy = authorizationPolicy('p', 'foo', {
      rules: [
        { from: [{ source: { principals: ['spiffe://cluster.local/ns/gone/sa/x', 'td/ns/missing/sa/y'] } }, { source: { serviceAccounts: ['absent/z'] } }] },
        { when: [{ key: 'source.namespace', notValues: ['nowhere'] }] },
      ],
    });
    expect(analyze(authorizationPoliciesAnalyzer, [...namespaces, policy])).toEqual([]);
  });
});

describe('auth.ServiceAccountAnalyzer', () => {
  const pods = [pod('sleep', 'bar', { serviceAccountName: 'sleep' }), pod('plain', 'foo')];
  test('service accounts some pod runs as (default when none is named) stay quiet', () => {
    const policy = authorizationPolicy('p', 'foo', {
      rules: [
        { from: [{ source: { principals: ['cluster.local/ns/bar/sa/sleep', 'cluster.local/ns/bar/sa/*'] } }, { source: { serviceAccounts: ['default'] } }] },
      ],
    });
    expect(analyze(serviceAccountAnalyzer, [...pods, policy])).toEqual([]);
  });
  test('a principal whose service account no pod uses is reported', () => {
    const policy = authorizationPolicy('p', 'foo', allowFrom({ principals: ['spiffe://cluster.local/ns/bar/sa/slep'] }));
    expect(analyze(serviceAccountAnalyzer, [...pods, policy])).toEqual([
      'Warning [MSH1006] (AuthorizationPolicy p.foo) Referenced service account "bar/slep" (in "spiffe://cluster.local/ns/bar/sa/slep") is used by no pod: the rule matches no workload',
    ]);
  });
});

describe('auth.ExtensionProviderAnalyzer', () => {
  const custom = (name: string): object =>
    authorizationPolicy('ext', 'foo', { action: 'CUSTOM', provider: { name }, rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] });
  const meshConfig = {
    ...DEFAULT_MESH_CONFIG,
    extensionProviders: [
      { name: 'opa', envoyExtAuthzGrpc: { service: 'opa.foo.svc.cluster.local', port: 9191 } },
      { name: 'gone', envoyExtAuthzHttp: { service: 'foo/gone.foo.svc.cluster.local', port: 8000 } },
      { name: 'tracer', zipkin: {} },
    ],
  };
  const opa = service('opa', 'foo', { app: 'opa' }, [{ port: 9191 }]);
  test('a usable provider of the mesh config stays quiet; another is not found', () => {
    expect(analyze(extensionProviderAnalyzer, [opa, custom('opa')], { meshConfig })).toEqual([]);
    expect(analyze(extensionProviderAnalyzer, [opa, custom('authz')], { meshConfig })).toEqual([
      'Error [MSH0101] (AuthorizationPolicy ext.foo) Referenced extension provider not found: "authz"',
    ]);
  });
  test('a provider whose service is missing, or that is no authorizer, is reported with why', () => {
    expect(analyze(extensionProviderAnalyzer, [custom('opa')], { meshConfig })).toEqual([
      expect.stringContaining(
        'Referenced extension provider "opa" cannot be used (found errors in provider opa: could not find service opa.foo.svc.cluster.local',
      ),
    ]);
    expect(analyze(extensionProviderAnalyzer, [opa, custom('gone')], { meshConfig })[0]).toContain('could not find service foo/gone.foo.svc.cluster.local');
    expect(analyze(extensionProviderAnalyzer, [opa, custom('tracer')], { meshConfig })[0]).toContain('is not an external authorizer');
  });
});

describe('<kind>.SelectorAnalyzer', () => {
  const [pa, ra, ap] = WORKLOAD_SELECTOR_ANALYZERS;
  const pods = [pod('httpbin', 'foo', { labels: { app: 'httpbin' } })];
  const selector = (app: string): object => ({ selector: { matchLabels: { app } } });
  test('each kind reports a selector matching no pod of its namespace', () => {
    expect(analyze(pa!, [...pods, peerAuthentication('pa', 'foo', { ...selector('htpbin'), mtls: { mode: 'STRICT' } })])).toEqual([
      'Warning [MSH0127] (PeerAuthentication pa.foo) No matching workloads for this resource with the following labels: app=htpbin',
    ]);
    expect(analyze(ra!, [...pods, requestAuthentication('ra', 'bar', selector('httpbin'))])).toEqual([
      'Warning [MSH0127] (RequestAuthentication ra.bar) No matching workloads for this resource with the following labels: app=httpbin',
    ]);
    expect(analyze(ap!, [...pods, authorizationPolicy('ap', 'foo', selector('nothing'))])).toHaveLength(1);
  });
  test('a match, a policy without selector, and a root-namespace selector matching any namespace stay quiet', () => {
    expect(analyze(ap!, [...pods, authorizationPolicy('ap', 'foo', selector('httpbin'))])).toEqual([]);
    expect(analyze(ap!, [...pods, authorizationPolicy('ap', 'mesh-system', {})])).toEqual([]);
    expect(analyze(pa!, [...pods, peerAuthentication('pa', 'mesh-system', selector('httpbin'))])).toEqual([]);
  });
});
