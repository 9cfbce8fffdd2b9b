import { describe, expect, test } from '@jest/globals';
import { buildCase, type CaseObject } from '../generators/testing/test-cases.js';
import { newSidecarLdsGenerator } from '../generators/index.js';
import { buildPushContext } from '../model/index.js';
import { newInboundSecurityFilters, SECURITY_PLUGINS, type SecurityPlugin } from './index.js';
import { generateRequest } from '../testing/generate-request.js';

// `--plugins` as the reference reads it: a plugin left out is not generated. `ext_authz` is the
// CUSTOM pair, `authn` jwt_authn and the inbound mutual TLS of PeerAuthentication, `authz` the
// AUDIT/DENY/ALLOW RBAC filters.
const selector = { matchLabels: { app: 'httpbin' } };
const OBJECTS: CaseObject[] = [
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'httpbin', namespace: 'bar' },
    spec: { clusterIP: '10.96.0.10', selector: { app: 'httpbin' }, ports: [{ name: 'http', port: 8000 }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'authz', namespace: 'bar' },
    spec: { clusterIP: '10.96.0.11', selector: { app: 'authz' }, ports: [{ name: 'grpc', port: 9000 }] },
  },
  {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'httpbin-1', namespace: 'bar', labels: { app: 'httpbin', 'security.mesh.io/tlsMode': 'mesh' } },
    spec: { serviceAccountName: 'httpbin', containers: [{ name: 'httpbin', ports: [{ containerPort: 8000 }] }] },
    status: { podIP: '10.0.0.2' },
  },
  { apiVersion: 'security.mesh.io/v1beta1', kind: 'PeerAuthentication', metadata: { name: 'default', namespace: 'bar' }, spec: { mtls: { mode: 'STRICT' } } },
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'RequestAuthentication',
    metadata: { name: 'jwt', namespace: 'bar' },
    spec: { selector, jwtRules: [{ issuer: 'issuer', jwks: '{"keys":[]}' }] },
  },
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'deny', namespace: 'bar' },
    spec: { selector, action: 'DENY', rules: [{ to: [{ operation: { paths: ['/admin'] } }] }] },
  },
  {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'ext', namespace: 'bar' },
    spec: { selector, action: 'CUSTOM', provider: { name: 'authz' }, rules: [{ to: [{ operation: { paths: ['/ext'] } }] }] },
  },
  { kind: 'ProxyNode', id: 'sidecar~10.0.0.2~httpbin-1.bar~bar.svc.cluster.local', metadata: { NAMESPACE: 'bar', SERVICE_ACCOUNT: 'httpbin' } },
];

/** The HTTP filter names of the inbound port 8000 and whether its chains require mutual TLS, with these plugins. */
function inboundOf(plugins: readonly SecurityPlugin[]): { filters: string[]; mutualTls: boolean } {
  const { model, proxy } = buildCase(OBJECTS, 'plugins');
  model.setMeshConfig({
    ...model.meshConfig(),
    extensionProviders: [{ name: 'authz', envoyExtAuthzGrpc: { service: 'authz.bar.svc.cluster.local', port: 9000 } }],
  });
  const generator = newSidecarLdsGenerator({
    securityFilters: newInboundSecurityFilters({ jwks: { keySetFor: (rule) => rule.jwks ?? '' }, plugins }),
    peerAuthentication: plugins.includes('authn'),
  });
  const listeners = (generator.generate(proxy, buildPushContext(model), generateRequest({ names: [], full: true, configsUpdated: [] }))?.resources ?? []).map(
    (named) => (typeof named.resource === 'function' ? named.resource() : named.resource) as Record<string, unknown>,
  );
  const inbound = listeners.find((listener) => listener['name'] === 'virtualInbound') as {
    filter_chains: { name: string; transport_socket?: unknown; filters: { typed_config: { http_filters?: { name: string }[] } }[] }[];
  };
  const chains = inbound.filter_chains.filter((chain) => chain.name === '0.0.0.0_8000');
  const filters = chains[0]?.filters[0]?.typed_config.http_filters?.map((filter) => filter.name) ?? [];
  return {
    filters: filters.filter((name) => !name.startsWith('mesh.') && name !== 'envoy.filters.http.router'),
    mutualTls: chains.every((chain) => chain.transport_socket !== undefined),
  };
}

describe('--plugins', () => {
  test('all of them (the default): the CUSTOM pair, jwt_authn and RBAC, on a mutual TLS port', () => {
    expect(inboundOf(SECURITY_PLUGINS)).toEqual({
      filters: ['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.jwt_authn', 'envoy.filters.http.rbac'],
      mutualTls: true,
    });
  });

  test('without ext_authz: no CUSTOM pair', () => {
    expect(inboundOf(['authn', 'authz'])).toEqual({ filters: ['envoy.filters.http.jwt_authn', 'envoy.filters.http.rbac'], mutualTls: true });
  });

  test('without authn: no jwt_authn, and the inbound port takes plain text (PeerAuthentication not applied)', () => {
    expect(inboundOf(['ext_authz', 'authz'])).toEqual({
      filters: ['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.rbac'],
      mutualTls: false,
    });
  });

  test('without authz: no local RBAC', () => {
    expect(inboundOf(['ext_authz', 'authn'])).toEqual({
      filters: ['envoy.filters.http.rbac', 'envoy.filters.http.ext_authz', 'envoy.filters.http.jwt_authn'],
      mutualTls: true,
    });
  });
});
