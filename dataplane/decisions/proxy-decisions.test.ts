import { describe, expect, test } from '@jest/globals';
import type { ConnectionFacts, PeerCertificate } from './facts.js';
import { compileProxyDecisions, type ListenerConfig, type ProxyResources, type RequestContext } from './proxy-decisions.js';

const TLS = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };

const peer: PeerCertificate = { uriSans: ['spiffe://cluster.local/ns/foo/sa/sleep'], dnsSans: [], subject: '', sha256: 'cafe' };

function hcm(extra: Record<string, unknown> = {}, filters: object[] = []): { name: string; typed_config: { '@type': string } & Record<string, unknown> } {
  return {
    name: 'envoy.filters.network.http_connection_manager',
    typed_config: {
      '@type': HCM,
      stat_prefix: 'inbound_0.0.0.0_80',
      route_config: {
        name: 'inbound|80||',
        virtual_hosts: [
          { name: 'inbound|http|8000', domains: ['*'], routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster: 'inbound|80||' } }] },
        ],
      },
      http_filters: [...filters, ROUTER],
      forward_client_cert_details: 'APPEND_FORWARD',
      set_current_client_cert_details: { subject: true, dns: true, uri: true },
      normalize_path: true,
      ...extra,
    },
  };
}

const serverTls = {
  name: 'envoy.transport_sockets.tls',
  typed_config: {
    '@type': TLS,
    require_client_certificate: true,
    common_tls_context: {
      alpn_protocols: ['h2', 'http/1.1'],
      tls_certificate_sds_secret_configs: [{ name: 'default' }],
      combined_validation_context: {
        default_validation_context: { match_subject_alt_names: [{ prefix: 'spiffe://cluster.local/' }] },
        validation_context_sds_secret_config: { name: 'ROOTCA' },
      },
    },
  },
};

const denyHeaders = {
  name: 'envoy.filters.http.rbac',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC',
    rules: {
      action: 'DENY',
      policies: { 'ns[bar]-policy[deny]-rule[0]': { permissions: [{ url_path: { path: { exact: '/headers' } } }], principals: [{ any: true }] } },
    },
  },
};

const virtualInbound: ListenerConfig = {
  name: 'virtualInbound',
  address: { socket_address: { address: '0.0.0.0', port_value: 15006 } },
  use_original_dst: true,
  listener_filters: [
    {
      name: 'envoy.filters.listener.tls_inspector',
      typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector' },
    },
  ],
  filter_chains: [
    {
      name: '0.0.0.0_80',
      filter_chain_match: { destination_port: 80, transport_protocol: 'tls' },
      transport_socket: serverTls,
      filters: [hcm({}, [denyHeaders])],
    },
    {
      name: '0.0.0.0_9000',
      filter_chain_match: { destination_port: 9000 },
      filters: [
        {
          name: 'envoy.filters.network.rbac',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC',
            stat_prefix: 'tcp.',
            rules: { action: 'ALLOW', policies: {} },
          },
        },
        {
          name: 'envoy.filters.network.tcp_proxy',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
            stat_prefix: 'inbound|9000||',
            cluster: 'inbound|9000||',
          },
        },
      ],
    },
  ],
};

const resources = (listeners: ListenerConfig[] = [virtualInbound]): ProxyResources => ({
  listeners,
  routes: new Map(),
  clusters: new Map([
    ['inbound|80||', { name: 'inbound|80||', type: 'ORIGINAL_DST' }],
    ['inbound|9000||', { name: 'inbound|9000||', type: 'ORIGINAL_DST' }],
  ]),
  endpoints: new Map(),
});

const connection = (overrides: Partial<ConnectionFacts> = {}): ConnectionFacts => ({
  destinationAddress: '127.10.0.2',
  destinationPort: 80,
  sourceAddress: '127.10.0.9',
  transportProtocol: 'tls',
  ...overrides,
});

const context = (facts: ConnectionFacts): RequestContext => ({
  connection: facts,
  localUriSan: 'spiffe://cluster.local/ns/bar/sa/httpbin',
  now: new Date(),
  random: 0,
  pick: 0,
});

describe('proxy decisions', () => {
  const decisions = compileProxyDecisions(resources());

  test('STRICT port: mutual TLS accepted with the server TLS settings; plain text reset', () => {
    expect(decisions.listenerFor('inbound', '127.10.0.2', 80)).toBe('virtualInbound');
    const accepted = decisions.connection('virtualInbound', connection());
    expect(accepted).toMatchObject({
      kind: 'accept',
      chain: '0.0.0.0_80',
      protocol: 'http',
      downstreamTls: { requireClientCertificate: true, certificateSecrets: ['default'], validationSecret: 'ROOTCA' },
    });
    expect(decisions.connection('virtualInbound', connection({ transportProtocol: 'raw_buffer' }))).toEqual({ kind: 'reset', listener: 'virtualInbound' });
  });

  test('HTTP: XFCC appended, RBAC DENY on one path, the route to the original destination', async () => {
    const accepted = decisions.connection('virtualInbound', connection());
    if (accepted.kind !== 'accept') throw new Error('expected a chain');
    const facts = connection({ peerCertificate: peer });
    const ok = await accepted.http(
      { method: 'GET', host: 'httpbin.bar:8000', path: '/ip', headers: { 'x-forwarded-client-cert': 'By=forged' } },
      context(facts),
    );
    expect(ok).toMatchObject({
      kind: 'forward',
      upstream: { kind: 'original-destination', cluster: 'inbound|80||' },
      headersToSet: {
        'x-forwarded-client-cert': 'By=forged,By=spiffe://cluster.local/ns/bar/sa/httpbin;Hash=cafe;Subject="";URI=spiffe://cluster.local/ns/foo/sa/sleep',
      },
    });
    const denied = await accepted.http({ method: 'GET', host: 'httpbin.bar:8000', path: '/./headers', headers: {} }, context(facts));
    expect(denied).toMatchObject({ kind: 'respond', status: 403, by: 'rbac', rbac: [{ allowed: false, matchedPolicy: 'ns[bar]-policy[deny]-rule[0]' }] });
  });

  test('TCP: an ALLOW filter with no policies resets the connection', async () => {
    const accepted = decisions.connection('virtualInbound', connection({ destinationPort: 9000, transportProtocol: 'raw_buffer' }));
    if (accepted.kind !== 'accept') throw new Error('expected a chain');
    expect(await accepted.tcp(context(connection()))).toMatchObject({ kind: 'reset', by: 'rbac' });
  });

  test('what the data plane cannot implement is refused with the resource and field named', () => {
    const bad: ListenerConfig = {
      ...virtualInbound,
      filter_chains: [
        {
          name: 'c',
          filters: [
            hcm({}, [{ name: 'envoy.filters.http.fault', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault' } }]),
          ],
        },
      ],
    };
    expect(() => compileProxyDecisions(resources([bad]))).toThrow(
      'Listener virtualInbound filter chain c: http_filters[0] (envoy.filters.http.fault): filter type type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault is not supported',
    );
    const optional: ListenerConfig = {
      ...virtualInbound,
      filter_chains: [{ name: 'c', filters: [hcm({}, [{ name: 'x', is_optional: true, typed_config: { '@type': 'type.googleapis.com/x.Y' } }])] }],
    };
    expect(() => compileProxyDecisions(resources([optional]))).not.toThrow();
  });

  test('listener, chain, match, connection manager and cluster fields it does not implement are refused by name', () => {
    const withField = (listener: Record<string, unknown>): ListenerConfig => ({ ...virtualInbound, ...listener }) as ListenerConfig;
    expect(() => compileProxyDecisions(resources([withField({ per_connection_buffer_limit_bytes: 1024 })]))).toThrow(
      'Listener virtualInbound: per_connection_buffer_limit_bytes: is not supported',
    );
    const chain = { name: 'c', filter_chain_match: { direct_source_prefix_ranges: [] }, filters: [hcm()] };
    expect(() => compileProxyDecisions(resources([withField({ filter_chains: [chain] })]))).toThrow(
      'filter chain c: filter_chain_match.direct_source_prefix_ranges: is not supported',
    );
    const fault = { name: 'c', filters: [hcm({ skip_xff_append: true })] };
    expect(() => compileProxyDecisions(resources([withField({ filter_chains: [fault] })]))).toThrow(
      'http_connection_manager.skip_xff_append: is not supported',
    );
    const breakers: ProxyResources = { ...resources(), clusters: new Map([['c', { name: 'c', type: 'EDS', circuit_breakers: {} } as never]]) };
    expect(() => compileProxyDecisions(breakers)).toThrow('Cluster c: circuit_breakers: is not supported');
  });

  test('ServiceEntry clusters: DNS ones pick among their named endpoints (LOGICAL_DNS the first only); ORIGINAL_DST takes the port override', () => {
    const endpoint = (address: string, port: number) => ({ endpoint: { address: { socket_address: { address, port_value: port } } } });
    const dns = (type: string) => ({
      name: type,
      type,
      dns_lookup_family: 'V4_ONLY',
      dns_refresh_rate: { seconds: 60 },
      respect_dns_ttl: true,
      lb_policy: 'LEAST_REQUEST',
      load_assignment: { cluster_name: type, endpoints: [{ lb_endpoints: [endpoint('eu.example.com', 443), endpoint('us.example.com', 8443)] }] },
    });
    const entries = compileProxyDecisions({
      ...resources(),
      clusters: new Map([
        ['STRICT_DNS', dns('STRICT_DNS')],
        ['LOGICAL_DNS', dns('LOGICAL_DNS')],
        [
          'passthrough',
          { name: 'passthrough', type: 'ORIGINAL_DST', lb_policy: 'CLUSTER_PROVIDED', original_dst_lb_config: { upstream_port_override: { value: 8080 } } },
        ],
      ] as never),
    });
    expect([0, 1].map((pick) => entries.upstream('STRICT_DNS', pick))).toMatchObject([
      { kind: 'endpoint', address: 'eu.example.com', port: 443 },
      { kind: 'endpoint', address: 'us.example.com', port: 8443 },
    ]);
    expect([0, 1].map((pick) => entries.upstream('LOGICAL_DNS', pick))).toMatchObject([
      { kind: 'endpoint', address: 'eu.example.com', port: 443 },
      { kind: 'endpoint', address: 'eu.example.com', port: 443 },
    ]);
    expect(entries.upstream('passthrough', 0)).toMatchObject({ kind: 'original-destination', portOverride: 8080 });
    expect(() => compileProxyDecisions({ ...resources(), clusters: new Map([['r', { name: 'r', type: 'REDIS' } as never]]) })).toThrow(
      'Cluster r: type: REDIS is not supported (EDS, STATIC, STRICT_DNS, LOGICAL_DNS, ORIGINAL_DST)',
    );
  });
});
