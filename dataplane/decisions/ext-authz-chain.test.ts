import { describe, expect, test } from '@jest/globals';
import type { CheckResponseMessage, ExtAuthzGrpcCall, ExtAuthzHttpCall, ExtAuthzTransport } from './ext-authz-types.js';
import type { ConnectionFacts } from './facts.js';
import type { TypedConfig } from './envoy-types.js';
import { compileProxyDecisions, type AcceptedChain, type ListenerConfig, type RequestContext } from './proxy-decisions.js';

// A CUSTOM pair in a proxy's chains, decided by compileProxyDecisions with a transport that
// records the calls: the RBAC filters' metadata reaches the ext_authz filter and the filters after.
const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const HTTP_RBAC = 'type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBAC';
const NETWORK_RBAC = 'type.googleapis.com/envoy.extensions.filters.network.rbac.v3.RBAC';
const ROUTER = { name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } };
const TCP_PROXY = {
  name: 'envoy.filters.network.tcp_proxy',
  typed_config: {
    '@type': 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    stat_prefix: 'inbound|9000||',
    cluster: 'inbound|9000||',
  },
};
const POLICY = 'mesh-ext-authz-ns[bar]-policy[ext]-rule[0]';
const KEY = 'mesh_ext_authz_shadow_effective_policy_id';
const GRPC = { grpc_service: { envoy_grpc: { cluster_name: 'outbound|9000||authz.foo', authority: 'authz.foo' } }, transport_api_version: 'V3' };

const shadow = (type: string, permission: object, prefix: string, extra: object = {}): TypedConfig => ({
  name: type === HTTP_RBAC ? 'envoy.filters.http.rbac' : 'envoy.filters.network.rbac',
  typed_config: {
    '@type': type,
    ...extra,
    shadow_rules: { action: 'DENY', policies: { [POLICY]: { permissions: [permission], principals: [{ any: true }] } } },
    shadow_rules_stat_prefix: prefix,
  },
});
const enabledBy = (filter: string): object => ({ filter, path: [{ key: KEY }], value: { string_match: { prefix: 'mesh-ext-authz' } } });
/** An enforced ALLOW that passes only what the CUSTOM rule matched: it reads the metadata the shadow filter wrote. */
const allowMatched = (type: string, filter: string, extra: object = {}): TypedConfig => ({
  name: filter,
  typed_config: {
    '@type': type,
    ...extra,
    rules: { action: 'ALLOW', policies: { 'needs-custom': { permissions: [{ metadata: enabledBy(filter) }], principals: [{ any: true }] } } },
  },
});

const listener: ListenerConfig = {
  name: 'virtualInbound',
  use_original_dst: true,
  filter_chains: [
    {
      name: 'http',
      filter_chain_match: { destination_port: 80 },
      filters: [
        {
          name: 'envoy.filters.network.http_connection_manager',
          typed_config: {
            '@type': HCM,
            route_config: {
              name: 'r',
              virtual_hosts: [{ name: 'v', domains: ['*'], routes: [{ match: { prefix: '/' }, route: { cluster: 'inbound|80||' } }] }],
            },
            http_filters: [
              shadow(HTTP_RBAC, { url_path: { path: { prefix: '/checked' } } }, 'mesh_ext_authz_'),
              {
                name: 'envoy.filters.http.ext_authz',
                typed_config: {
                  '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
                  ...GRPC,
                  filter_enabled_metadata: enabledBy('envoy.filters.http.rbac'),
                },
              },
              shadow(HTTP_RBAC, { any: true }, 'mesh_dry_run_allow_'),
              ROUTER,
            ],
          },
        },
      ],
    },
    {
      name: 'tcp',
      filter_chain_match: { destination_port: 9000 },
      filters: [
        shadow(NETWORK_RBAC, { destination_port: 9000 }, 'mesh_ext_authz_', { stat_prefix: 'tcp.' }),
        {
          name: 'envoy.filters.network.ext_authz',
          typed_config: {
            '@type': 'type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz',
            stat_prefix: 'tcp.',
            ...GRPC,
            filter_enabled_metadata: enabledBy('envoy.filters.network.rbac'),
          },
        },
        allowMatched(NETWORK_RBAC, 'envoy.filters.network.rbac', { stat_prefix: 'tcp.' }),
        TCP_PROXY,
      ],
    },
  ],
};

const decisions = compileProxyDecisions({
  listeners: [listener],
  routes: new Map(),
  clusters: new Map([
    ['inbound|80||', { name: 'inbound|80||', type: 'ORIGINAL_DST' }],
    ['inbound|9000||', { name: 'inbound|9000||', type: 'ORIGINAL_DST' }],
  ]),
  endpoints: new Map(),
});

const facts = (port: number): ConnectionFacts => ({
  destinationAddress: '10.0.0.2',
  destinationPort: port,
  sourceAddress: '10.0.0.1',
  transportProtocol: 'raw_buffer',
});

function chain(port: number): AcceptedChain {
  const accepted = decisions.connection('virtualInbound', facts(port));
  if (accepted.kind !== 'accept') throw new Error('expected a chain');
  return accepted;
}

function transport(answer: CheckResponseMessage): { transport: ExtAuthzTransport; calls: (ExtAuthzHttpCall | ExtAuthzGrpcCall)[] } {
  const calls: (ExtAuthzHttpCall | ExtAuthzGrpcCall)[] = [];
  return {
    calls,
    transport: {
      http: async (call) => (calls.push(call), { kind: 'failure', reason: 'no-transport', detail: 'unused' }),
      grpc: async (call) => (calls.push(call), { kind: 'response', response: answer }),
    },
  };
}

const context = (port: number, extAuthz?: ExtAuthzTransport): RequestContext => ({
  connection: facts(port),
  now: new Date(),
  random: 0,
  pick: 0,
  ...(extAuthz ? { extAuthz } : {}),
});
const ALLOW: CheckResponseMessage = {
  status: { code: 0 },
  ok_response: {
    headers: [{ header: { key: 'x-user', value: 'alice' }, append: { value: false } }],
    headers_to_remove: ['x-secret'],
    response_headers_to_add: [{ header: { key: 'x-trace', value: 't' } }],
  },
};

describe('a CUSTOM pair in an HTTP chain', () => {
  test('a matched request is checked; the edits reach the upstream and the client; both shadow filters write their metadata', async () => {
    const { transport: recording, calls } = transport(ALLOW);
    const decision = await chain(80).http({ method: 'GET', host: 'a', path: '/checked', headers: { 'x-secret': 's', 'x-keep': 'k' } }, context(80, recording));
    expect(calls.map((call) => call.cluster)).toEqual(['outbound|9000||authz.foo']);
    expect(decision).toMatchObject({
      kind: 'forward',
      headersToSet: { 'x-user': 'alice' },
      responseHeaderMutations: [{ name: 'x-trace', value: 't', action: 'append' }],
      extAuthz: [{ result: 'ok', calledCluster: 'outbound|9000||authz.foo', statCluster: 'inbound|80||' }],
      metadata: {
        'envoy.filters.http.rbac': {
          mesh_ext_authz_shadow_effective_policy_id: POLICY,
          mesh_ext_authz_shadow_engine_result: 'denied',
          mesh_dry_run_allow_shadow_effective_policy_id: POLICY,
          mesh_dry_run_allow_shadow_engine_result: 'denied',
        },
      },
    });
    if (decision.kind !== 'forward') throw new Error('expected a forward');
    expect(decision.headersToRemove).toContain('x-secret');
  });

  test('an unmatched request is not checked (disabled) and writes an allowed shadow result without a policy id', async () => {
    const { transport: recording, calls } = transport(ALLOW);
    const decision = await chain(80).http({ method: 'GET', host: 'a', path: '/open', headers: {} }, context(80, recording));
    expect(calls).toEqual([]);
    expect(decision).toMatchObject({ kind: 'forward', extAuthz: [{ result: 'disabled' }] });
    if (decision.kind !== 'forward') throw new Error('expected a forward');
    expect(decision.metadata['envoy.filters.http.rbac']).toMatchObject({ mesh_ext_authz_shadow_engine_result: 'allowed' });
    expect(decision.metadata['envoy.filters.http.rbac']?.[KEY]).toBeUndefined();
  });

  test('a denial answers the client (by ext_authz); without a transport the check fails closed', async () => {
    const denied = await chain(80).http(
      { method: 'GET', host: 'a', path: '/checked', headers: {} },
      context(80, transport({ status: { code: 7 }, denied_response: { status: { code: 'Unauthorized' }, body: 'no' } }).transport),
    );
    expect(denied).toMatchObject({ kind: 'respond', status: 401, body: 'no', by: 'ext_authz' });
    expect(await chain(80).http({ method: 'GET', host: 'a', path: '/checked', headers: {} }, context(80))).toMatchObject({
      kind: 'respond',
      status: 403,
      body: '',
      by: 'ext_authz',
      extAuthz: [{ result: 'error' }],
    });
  });
});

describe('a CUSTOM pair in a TCP chain: rbac (shadow), ext_authz, rbac, tcp_proxy', () => {
  test('allowed: the later RBAC filter sees the shadow metadata, the connection goes to the cluster', async () => {
    const { transport: recording, calls } = transport({ status: { code: 0 } });
    const decision = await chain(9000).tcp(context(9000, recording));
    expect(decision).toMatchObject({ kind: 'forward', upstream: { cluster: 'inbound|9000||' }, extAuthz: [{ result: 'ok', statPrefix: 'tcp.' }] });
    expect(decision.rbac.map((verdict) => verdict.allowed)).toEqual([true, true]);
    expect(calls).toHaveLength(1);
  });

  test('denied: reset by ext_authz before the later filters', async () => {
    const decision = await chain(9000).tcp(context(9000, transport({ status: { code: 7 } }).transport));
    expect(decision).toMatchObject({ kind: 'reset', by: 'ext_authz', extAuthz: [{ result: 'denied' }] });
    expect(decision.rbac).toHaveLength(1);
  });

  test('ext_authz after tcp_proxy is refused, naming the filter', () => {
    const tcpChain = listener.filter_chains?.[1];
    if (!tcpChain?.filters) throw new Error('no TCP chain');
    const misplaced: ListenerConfig = { ...listener, filter_chains: [{ ...tcpChain, filters: [TCP_PROXY, tcpChain.filters[1] as never] }] };
    expect(() => compileProxyDecisions({ listeners: [misplaced], routes: new Map(), clusters: new Map(), endpoints: new Map() })).toThrow(
      'Listener virtualInbound filter chain tcp: filters[0] (envoy.filters.network.tcp_proxy): tcp_proxy must be the last filter',
    );
  });
});
