import { describe, expect, test } from '@jest/globals';
import { validateResource } from './index.js';

const serviceEntry = (spec: Record<string, unknown>, labels?: Record<string, string>) => ({
  apiVersion: 'networking.mesh.io/v1alpha3',
  kind: 'ServiceEntry',
  metadata: { name: 'entry', namespace: 'foo', ...(labels ? { labels } : {}) },
  spec,
});

const TLS_443 = { number: 443, name: 'tls', protocol: 'TLS' };

describe('ServiceEntry validation, beyond the corpus', () => {
  test('a unix:// endpoint needs exactly one service port', () => {
    const result = validateResource(
      serviceEntry({
        hosts: ['local.example.com'],
        addresses: ['192.0.2.1'],
        resolution: 'STATIC',
        ports: [TLS_443, { number: 80, name: 'http', protocol: 'HTTP' }],
        endpoints: [{ address: 'unix:///var/run/a.sock' }],
      }),
    );
    expect(result.errors).toEqual([
      { path: 'spec.endpoints[0].address', message: 'a unix:// endpoint serves exactly one service port: expected the ServiceEntry to have 1, got 2' },
    ]);
  });

  test('DNS endpoints may only name the service’s ports', () => {
    const result = validateResource(
      serviceEntry({ hosts: ['api.example.com'], resolution: 'DNS', ports: [TLS_443], endpoints: [{ address: 'lb.example.com', ports: { http: 8080 } }] }),
    );
    expect(result.errors).toEqual([
      { path: 'spec.endpoints[0].ports.http', message: 'port "http" is not defined by the service entry: expected one of its port names' },
    ]);
  });

  test('warnings: a TCP port without addresses, a partial wildcard, an empty selector, a selector with NONE', () => {
    const result = validateResource(
      serviceEntry({ hosts: ['*.example.com', 'foo*.example.com'], resolution: 'NONE', ports: [{ number: 5432, name: 'pg' }], workloadSelector: {} }),
    );
    expect(result.errors).toEqual([
      {
        path: 'spec.hosts[1]',
        message: 'expected a DNS name whose first label may be a wildcard (such as *.example.com), got "foo*.example.com" (label "foo*" is invalid)',
      },
    ]);
    expect(result.warnings).toEqual([
      {
        path: 'spec.workloadSelector',
        message: 'selector without labels selects every workload in the namespace; add labels or remove the selector',
      },
      {
        path: 'spec.ports[0]',
        message: 'a TCP (or unset) protocol port is told apart only by its address: expected addresses, as IPs are not allocated automatically',
      },
      { path: 'spec.workloadSelector', message: 'has no effect with resolution NONE' },
    ]);
  });

  test('exportTo "~" is allowed for a ServiceEntry only', () => {
    expect(validateResource(serviceEntry({ hosts: ['api.example.com'], resolution: 'DNS', ports: [TLS_443], exportTo: ['~'] })).errors).toEqual([]);
    const rule = {
      apiVersion: 'networking.mesh.io/v1alpha3',
      kind: 'DestinationRule',
      metadata: { name: 'dr', namespace: 'foo' },
      spec: { host: 'api.example.com', exportTo: ['~'] },
    };
    expect(validateResource(rule).errors).toEqual([
      { path: 'spec.exportTo[0]', message: 'exportTo "~" (no namespace) is not allowed here: expected ".", "*" or a namespace name' },
    ]);
  });

  test('the resource comes back typed when valid', () => {
    const spec = { hosts: ['api.example.com'], location: 'MESH_EXTERNAL', resolution: 'DNS', ports: [TLS_443], subjectAltNames: ['spiffe://x/ns/y/sa/z'] };
    expect(validateResource(serviceEntry(spec)).resource).toEqual(serviceEntry(spec));
  });
});
