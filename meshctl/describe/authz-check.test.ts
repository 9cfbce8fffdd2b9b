import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { newSidecarLdsGenerator } from '../../xds/generators/index.js';
import { buildPushContext } from '../../xds/model/index.js';
import { buildCase, type CaseObject } from '../../xds/generators/testing/test-cases.js';
import { newInboundSecurityFilters } from '../../xds/security/index.js';
import type { EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import { authzCheck, parsePolicyKey, policyNamesOf } from './authz-check.js';
import { generateRequest } from '../../xds/testing/generate-request.js';

// x authz check over the listeners the daemon's generators give a sidecar: CUSTOM policies are
// read from the shadow rules that send requests to the authorizer, as the reference reads them.
const MESH = `
kind: MeshConfig
spec:
  extensionProviders:
    - { name: opa, envoyExtAuthzGrpc: { service: opa.foo.svc.cluster.local, port: 9191 } }
---
apiVersion: v1
kind: Service
metadata: { name: opa, namespace: foo }
spec: { clusterIP: 10.96.0.20, selector: { app: opa }, ports: [{ name: grpc, port: 9191 }] }
---
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec: { clusterIP: 10.96.0.10, selector: { app: httpbin }, ports: [{ name: http, port: 8000 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: httpbin-1, namespace: foo, labels: { app: httpbin } }
spec: { serviceAccountName: httpbin, containers: [{ name: httpbin, ports: [{ containerPort: 8000 }] }] }
status: { podIP: 10.0.1.10 }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: ext-authz, namespace: foo }
spec: { action: CUSTOM, provider: { name: opa }, rules: [{ to: [{ operation: { paths: ["/admin"] } }] }, { to: [{ operation: { ports: ["8000"] } }] }] }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: no-provider, namespace: foo }
spec: { action: CUSTOM, provider: { name: missing }, rules: [{ to: [{ operation: { paths: ["/x"] } }] }] }
---
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-admin, namespace: foo }
spec: { action: DENY, rules: [{ to: [{ operation: { paths: ["/admin"] } }] }] }
---
kind: ProxyNode
id: sidecar~10.0.1.10~httpbin-1.foo~foo.svc.cluster.local
metadata: { NAMESPACE: foo, SERVICE_ACCOUNT: httpbin }
`;

function dump(): EnvoyConfigDump {
  const { model, proxy } = buildCase(
    parseAllDocuments(MESH).map((document) => document.toJS() as CaseObject),
    'authz check',
  );
  const generator = newSidecarLdsGenerator({ securityFilters: newInboundSecurityFilters({ jwks: { keySetFor: () => '' } }) });
  const listeners = (generator.generate(proxy, buildPushContext(model), generateRequest({ names: [], full: true, configsUpdated: [] }))?.resources ?? []).map(
    (named) => (typeof named.resource === 'function' ? named.resource() : named.resource),
  );
  const configs = [
    { '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump', dynamic_listeners: listeners.map((listener) => ({ active_state: { listener } })) },
  ];
  return JSON.parse(JSON.stringify({ configs })) as EnvoyConfigDump;
}

describe('x authz check', () => {
  test('CUSTOM rows come from the authorizer pairs; a CUSTOM policy whose provider is missing is the DENY it became', () => {
    expect(authzCheck(dump())).toBe(
      [
        'ACTION   AuthorizationPolicy   RULES',
        'DENY     deny-admin.foo        1',
        'DENY     no-provider.foo       1',
        'CUSTOM   ext-authz.foo         2',
        '',
      ].join('\n'),
    );
    expect(policyNamesOf(dump())).toEqual(['deny-admin.foo', 'ext-authz.foo', 'no-provider.foo']);
  });

  test('policy keys: plain, CUSTOM with its provider, CUSTOM denied for its provider', () => {
    expect(parsePolicyKey('ns[foo]-policy[p]-rule[1]')).toEqual({ policy: 'p.foo', rule: '1' });
    expect(parsePolicyKey('mesh-ext-authz-opa-ns[foo]-policy[p]-rule[0]')).toEqual({ policy: 'p.foo', rule: '0', provider: 'opa' });
    expect(parsePolicyKey('mesh-ext-authz-a-ns-ns[foo]-policy[p]-rule[0]-deny-due-to-bad-CUSTOM-action')).toEqual({
      policy: 'p.foo',
      rule: '0',
      provider: 'a-ns',
      badProvider: true,
    });
  });
});
