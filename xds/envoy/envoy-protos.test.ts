import { beforeAll, describe, expect, test } from '@jest/globals';
import { credentials, makeGenericClientConstructor } from '@grpc/grpc-js';
import { ADS_SERVICE, CSDS_SERVICE, loadEnvoyProtos, type EnvoyProtos } from './envoy-protos.js';
import { CLUSTER_TYPE, LISTENER_TYPE, SECRET_TYPE } from './type-urls.js';
import { errorMessage } from '../../runtime/index.js';

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';
const ROUTER = 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router';

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function listenerWith(hcm: Record<string, unknown>): object {
  return { name: 'l', api_listener: { api_listener: { '@type': HCM, ...hcm } } };
}

describe('loadEnvoyProtos', () => {
  test.each([
    'envoy.service.discovery.v3.DiscoveryRequest',
    'envoy.service.discovery.v3.DeltaDiscoveryResponse',
    'envoy.config.listener.v3.Listener',
    'envoy.config.cluster.v3.Cluster',
    'envoy.config.route.v3.RouteConfiguration',
    'envoy.config.endpoint.v3.ClusterLoadAssignment',
    'envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    'envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication',
    'envoy.extensions.filters.http.rbac.v3.RBAC',
    'envoy.extensions.filters.network.rbac.v3.RBAC',
    'envoy.extensions.filters.http.router.v3.Router',
    'envoy.extensions.filters.http.fault.v3.HTTPFault',
    'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext',
    'envoy.extensions.transport_sockets.tls.v3.Secret',
    'envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector',
    'envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy',
    'envoy.service.status.v3.ClientConfig',
    'envoy.admin.v3.ConfigDump',
    'envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
    'envoy.extensions.filters.network.ext_authz.v3.ExtAuthz',
    'envoy.service.auth.v3.CheckRequest',
  ])('knows %s', (name) => {
    expect(protos.lookupType(name).fullName).toBe(`.${name}`);
  });

  test('an unknown type is an error with a code', () => {
    expect(() => protos.lookupType('envoy.config.cluster.v3.NoSuchThing')).toThrow(expect.objectContaining({ code: 'unknown-proto-type' }));
  });

  test('builds gRPC service definitions that grpc-js accepts', () => {
    const ads = protos.serviceDefinition(ADS_SERVICE);
    expect(Object.keys(ads).sort()).toEqual(['DeltaAggregatedResources', 'StreamAggregatedResources']);
    expect(ads['StreamAggregatedResources']?.path).toBe('/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources');
    expect(Object.keys(protos.serviceDefinition(CSDS_SERVICE)).sort()).toEqual(['FetchClientStatus', 'StreamClientStatus']);
    const Client = makeGenericClientConstructor(ads, 'AggregatedDiscoveryService');
    const client = new Client('127.0.0.1:1', credentials.createInsecure());
    expect(typeof (client as unknown as Record<string, unknown>)['StreamAggregatedResources']).toBe('function');
    client.close();
  });
});

describe('encodeAny', () => {
  test('takes the ext_authz filters as the CUSTOM generator writes them, and refuses a misspelt field', () => {
    const enabled = {
      filter: 'envoy.filters.http.rbac',
      path: [{ key: 'mesh_ext_authz_shadow_effective_policy_id' }],
      value: { string_match: { prefix: 'mesh-ext-authz' } },
    };
    const http = {
      http_service: {
        server_uri: { uri: 'http://authz.foo', cluster: 'outbound|8000||authz.foo', timeout: { seconds: 600 } },
        path_prefix: '/check',
        authorization_request: { headers_to_add: [{ key: 'x-a', value: 'b' }] },
      },
      status_on_error: { code: 503 },
      transport_api_version: 'V3',
      filter_enabled_metadata: enabled,
    };
    const httpType = 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz';
    expect(protos.decodeAny(protos.encodeAny(httpType, http))).toMatchObject({
      status_on_error: { code: 'ServiceUnavailable' },
      http_service: { server_uri: { timeout: { seconds: '600' } } },
    });
    const network = {
      stat_prefix: 'tcp.',
      grpc_service: { envoy_grpc: { cluster_name: 'outbound|9000||authz.foo', authority: 'authz.foo' } },
      transport_api_version: 'V3',
      filter_enabled_metadata: { ...enabled, filter: 'envoy.filters.network.rbac' },
    };
    expect(protos.decodeAny(protos.encodeAny('type.googleapis.com/envoy.extensions.filters.network.ext_authz.v3.ExtAuthz', network))).toEqual(network);
    expect(() => protos.encodeAny(httpType, { ...http, failure_mode_alow: true })).toThrow(/failure_mode_alow/);
  });

  test('round-trips a cluster with enums by name and nested messages', () => {
    const cluster = {
      name: 'outbound|80||a.default.svc.cluster.local',
      type: 'EDS',
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
      connect_timeout: { seconds: 10 },
      lb_policy: 'LEAST_REQUEST',
    };
    const any = protos.encodeAny(CLUSTER_TYPE, cluster);
    expect(any.type_url).toBe(CLUSTER_TYPE);
    expect(protos.decodeAny(any)).toEqual({ ...cluster, connect_timeout: { seconds: '10' } });
  });

  test('packs a nested Any written with @type and decodes it back the same way', () => {
    const listener = listenerWith({
      stat_prefix: 'x',
      rds: { route_config_name: 'r', config_source: { ads: {} } },
      http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
    });
    expect(protos.decodeAny(protos.encodeAny(LISTENER_TYPE, listener))).toEqual(listener);
  });

  test.each([
    ['an unknown top-level field', CLUSTER_TYPE, { name: 'a', bogus: 1 }, /bogus: unknown field of envoy\.config\.cluster\.v3\.Cluster/],
    ['an unknown nested field', CLUSTER_TYPE, { name: 'a', eds_cluster_config: { eds_configx: {} } }, /eds_cluster_config\.eds_configx: unknown field/],
    ['a camelCase name', CLUSTER_TYPE, { name: 'a', connectTimeout: { seconds: 1 } }, /connectTimeout: unknown field/],
    [
      'an unknown field inside a nested Any',
      LISTENER_TYPE,
      listenerWith({ stat_prefix: 'x', rdss: {} }),
      /api_listener\.api_listener\.rdss: unknown field of envoy\.extensions\.filters\.network\.http_connection_manager/,
    ],
    [
      'an unknown field two Anys deep',
      LISTENER_TYPE,
      listenerWith({ stat_prefix: 'x', http_filters: [{ name: 'r', typed_config: { '@type': ROUTER, suppress: true } }] }),
      /http_filters\[0\]\.typed_config\.suppress: unknown field of envoy\.extensions\.filters\.http\.router\.v3\.Router/,
    ],
    [
      'an Any naming an unknown type',
      LISTENER_TYPE,
      listenerWith({ stat_prefix: 'x', http_filters: [{ name: 'r', typed_config: { '@type': 'type.googleapis.com/no.Such' } }] }),
      /unknown type type\.googleapis\.com\/no\.Such/,
    ],
    ['an unknown enum value', CLUSTER_TYPE, { name: 'a', type: 'MAGIC' }, /type: unknown DiscoveryType value "MAGIC"/],
    ['a string for a number', CLUSTER_TYPE, { name: 'a', connect_timeout: { seconds: 'ten' } }, /connect_timeout\.seconds: expected an integer/],
    ['a number for a string', CLUSTER_TYPE, { name: 7 }, /name: expected a string/],
    ['an object for a list', LISTENER_TYPE, { name: 'l', filter_chains: {} }, /filter_chains: expected a list/],
    ['two members of one oneof', CLUSTER_TYPE, { name: 'a', type: 'EDS', cluster_type: { name: 'x' } }, /oneof cluster_discovery_type already set by type/],
    [
      'an out-of-range uint32',
      'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
      { cluster_name: 'a', endpoints: [{ priority: -1 }] },
      /endpoints\[0\]\.priority: expected an integer from 0/,
    ],
  ])('rejects %s', (_case, typeUrl, message, pattern) => {
    let error: unknown;
    try {
      protos.encodeAny(typeUrl, message);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'invalid-xds-resource' });
    expect(errorMessage(error)).toMatch(pattern);
  });

  test('accepts bytes, int64 strings and enum numbers', () => {
    const secret = { name: 's', tls_certificate: { certificate_chain: { inline_bytes: Buffer.from('pem') } } };
    expect(() => protos.encodeAny(SECRET_TYPE, secret)).not.toThrow();
    expect(() => protos.encodeAny(CLUSTER_TYPE, { name: 'a', type: 3, connect_timeout: { seconds: '5' } })).not.toThrow();
  });
});
