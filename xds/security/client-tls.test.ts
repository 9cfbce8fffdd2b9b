import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { validateResource, type DestinationRule, type TypedResource } from '../../crds/index.js';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import { compileUpstreamTls, type ClusterTlsConfig } from '../../dataplane/decisions/index.js';
import { buildClusterLoadAssignment, buildOutboundClusters } from '../generators/index.js';
import { buildPushContext, type PushContext } from '../model/index.js';
import { loadCase } from '../generators/testing/test-cases.js';
import { CLUSTER_TYPE, ENDPOINT_TYPE, loadEnvoyProtos, type EnvoyProtos, type Proxy } from '../index.js';
import { clientTlsSettingsFor, meshSni, newClientTlsHook, serviceSubjectAltNames, SYSTEM_CA_CERTIFICATES } from './client-tls.js';
import { endpointMeshTlsOf } from '../model/endpoint-mesh-tls.js';

const TESTDATA = fileURLToPath(new URL('./testdata/client-tls/', import.meta.url));
const HTTPBIN = 'httpbin.foo.svc.cluster.local';

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

interface Loaded {
  proxy: Proxy;
  push: PushContext;
}

/** A golden case with extra policy documents applied and, optionally, mesh config changes. */
function load(caseName: string, extraYaml = '', meshConfig: Partial<typeof DEFAULT_MESH_CONFIG> = {}): Loaded {
  const { model, proxy } = loadCase(TESTDATA, `${caseName}.in.yaml`);
  for (const document of parseAllDocuments(extraYaml)) {
    const object: unknown = document.toJS();
    if (object === null) continue;
    const result = validateResource(object);
    if (result.errors.length > 0) throw new Error(JSON.stringify(result.errors));
    model.configStore.apply(result.resource as TypedResource);
  }
  model.setMeshConfig({ ...DEFAULT_MESH_CONFIG, ...meshConfig });
  return { proxy, push: buildPushContext(model) };
}

function clustersOf({ proxy, push }: Loaded, hook = newClientTlsHook()): Map<string, Record<string, unknown>> {
  const clusters = buildOutboundClusters(proxy, push, { clusterTransportSocket: hook });
  for (const cluster of clusters) protos.encodeAny(CLUSTER_TYPE, cluster);
  return new Map(clusters.map((cluster) => [cluster.name, cluster as Record<string, unknown>]));
}

function cluster(clusters: Map<string, Record<string, unknown>>, name: string): Record<string, unknown> {
  const found = clusters.get(name);
  if (!found) throw new Error(`no cluster ${name}`);
  return found;
}

interface TlsContextView {
  sni?: string;
  common_tls_context: {
    alpn_protocols?: string[];
    tls_certificate_sds_secret_configs?: { name: string }[];
    tls_certificates?: unknown[];
    validation_context?: { trusted_ca?: { filename: string }; match_subject_alt_names?: { exact: string }[] };
    combined_validation_context?: {
      default_validation_context: { match_subject_alt_names?: { exact: string }[] };
      validation_context_sds_secret_config: { name: string };
    };
  };
}

/** The UpstreamTlsContext of a cluster's own socket, or of its `tlsMode-mesh` match. */
function tlsContextOf(value: Record<string, unknown>): TlsContextView | undefined {
  const matches = value['transport_socket_matches'] as { name: string; transport_socket: { typed_config: TlsContextView } }[] | undefined;
  const socket =
    (value['transport_socket'] as { typed_config: TlsContextView & { '@type': string } } | undefined) ??
    matches?.find((match) => match.name === 'tlsMode-mesh')?.transport_socket;
  const config = socket?.typed_config as (TlsContextView & { '@type': string }) | undefined;
  return config?.['@type'].endsWith('UpstreamTlsContext') ? config : undefined;
}

function sansOf(context: TlsContextView | undefined): string[] | undefined {
  const common = context?.common_tls_context;
  return (common?.combined_validation_context?.default_validation_context.match_subject_alt_names ?? common?.validation_context?.match_subject_alt_names)?.map(
    (san) => san.exact,
  );
}

function rule(trafficPolicy: string, subsets = ''): DestinationRule {
  const text = `apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: httpbin, namespace: foo }
spec:
  host: ${HTTPBIN}
  trafficPolicy: ${trafficPolicy}
${subsets ? `  subsets: ${subsets}` : ''}`;
  const result = validateResource(parseAllDocuments(text)[0]?.toJS());
  if (result.errors.length > 0) throw new Error(JSON.stringify(result.errors));
  return result.resource as DestinationRule;
}

describe('mesh SNI', () => {
  test.each([
    [80, '', 'a.ns.svc.cluster.local', 'outbound_.80_._.a.ns.svc.cluster.local'],
    [8000, 'v1', HTTPBIN, `outbound_.8000_.v1_.${HTTPBIN}`],
  ])('port %d subset "%s" of %s', (port, subset, host, expected) => {
    expect(meshSni(port, subset, host)).toBe(expected);
  });

  test('auto mTLS clusters carry the SNI of their own port and subset', () => {
    const clusters = clustersOf(load('port-level-and-subsets'));
    expect(tlsContextOf(cluster(clusters, `outbound|8000|v3|${HTTPBIN}`))?.sni).toBe(`outbound_.8000_.v3_.${HTTPBIN}`);
    expect(tlsContextOf(cluster(clusters, `outbound|8000|v1|${HTTPBIN}`))?.sni).toBe(`outbound_.8000_.v1_.${HTTPBIN}`);
  });
});

describe('SANs of the destination service', () => {
  test('exact SPIFFE identities of the service accounts behind the service only, sorted', () => {
    const loaded = load('peer-authentication-disable');
    expect(serviceSubjectAltNames(loaded.push, { hostname: HTTPBIN, namespace: 'foo' })).toEqual([
      'spiffe://cluster.local/ns/foo/sa/httpbin',
      'spiffe://cluster.local/ns/foo/sa/httpbin-legacy',
    ]);
    const clusters = clustersOf(loaded);
    expect(sansOf(tlsContextOf(cluster(clusters, 'outbound|80||legacy.foo.svc.cluster.local')))).toEqual(['spiffe://cluster.local/ns/foo/sa/legacy']);
  });

  test('the trust domain and each alias', () => {
    const loaded = load('auto-mtls', '', { trustDomain: 'new.td', trustDomainAliases: ['cluster.local', 'new.td'] });
    expect(sansOf(tlsContextOf(cluster(clustersOf(loaded), `outbound|8000||${HTTPBIN}`)))).toEqual([
      'spiffe://cluster.local/ns/foo/sa/httpbin',
      'spiffe://cluster.local/ns/foo/sa/httpbin-legacy',
      'spiffe://new.td/ns/foo/sa/httpbin',
      'spiffe://new.td/ns/foo/sa/httpbin-legacy',
    ]);
  });
});

describe('DestinationRule TLS for a port and subset', () => {
  const subsets = `[{ name: v1, labels: { version: v1 } }, { name: v2, labels: { version: v2 }, trafficPolicy: { tls: { mode: SIMPLE } } }, { name: v3, labels: { version: v1 }, trafficPolicy: { tls: { mode: SIMPLE }, portLevelSettings: [{ port: { number: 8000 }, loadBalancer: { simple: RANDOM } }] } }]`;
  const withPorts = rule(
    '{ tls: { mode: MESH_MUTUAL }, portLevelSettings: [{ port: { number: 9000 }, tls: { mode: DISABLE } }, { port: { number: 9001 }, loadBalancer: { simple: RANDOM } }] }',
    subsets,
  );
  const subset = (name: string) => withPorts.spec.subsets?.find((entry) => entry.name === name);

  test.each([
    ['top level', 8000, undefined, 'MESH_MUTUAL'],
    ['a port-level entry replaces the top level', 9000, undefined, 'DISABLE'],
    ['a port-level entry without tls means none (no inheritance)', 9001, undefined, undefined],
    ['a subset without a policy inherits the port-resolved settings', 9000, 'v1', 'DISABLE'],
    ['a subset tls overrides the port-level entry', 9000, 'v2', 'SIMPLE'],
    ["a subset's own port-level entry overrides its tls", 8000, 'v3', undefined],
    ["a subset's tls applies on ports its port-level settings do not name", 9000, 'v3', 'SIMPLE'],
  ])('%s', (_label, port, subsetName, mode) => {
    expect(clientTlsSettingsFor(withPorts, port, subsetName ? subset(subsetName) : undefined)?.mode).toBe(mode);
  });

  test('settings without a mode count as none', () => {
    expect(clientTlsSettingsFor(rule('{ tls: { sni: x.example.com } }'), 8000)).toBeUndefined();
    expect(clientTlsSettingsFor(undefined, 8000)).toBeUndefined();
  });

  test('a port-level DISABLE gives plain text on that port only, the rest keeps the top-level mode', () => {
    const clusters = clustersOf(
      load('auto-mtls', `---\n${yamlOf('{ tls: { mode: MESH_MUTUAL }, portLevelSettings: [{ port: { number: 9000 }, tls: { mode: DISABLE } }] }')}`),
    );
    expect(cluster(clusters, `outbound|9000||${HTTPBIN}`)['transport_socket']).toMatchObject({ name: 'envoy.transport_sockets.raw_buffer' });
    expect(tlsContextOf(cluster(clusters, `outbound|8000||${HTTPBIN}`))?.sni).toBe(`outbound_.8000_._.${HTTPBIN}`);
    expect(cluster(clusters, `outbound|8000||${HTTPBIN}`)['transport_socket_matches']).toBeUndefined();
  });
});

function yamlOf(trafficPolicy: string): string {
  return `apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: httpbin, namespace: foo }
spec:
  host: ${HTTPBIN}
  trafficPolicy: ${trafficPolicy}`;
}

describe('the client TLS hook', () => {
  test('auto mTLS: the mesh match first, then plain text for everything else', () => {
    const value = cluster(clustersOf(load('auto-mtls')), `outbound|8000||${HTTPBIN}`);
    const matches = value['transport_socket_matches'] as { name: string; transport_socket: { name: string } }[];
    expect(matches.map((match) => [match.name, match.transport_socket.name])).toEqual([
      ['tlsMode-mesh', 'envoy.transport_sockets.tls'],
      ['tlsMode-disabled', 'envoy.transport_sockets.raw_buffer'],
    ]);
    expect(value['transport_socket']).toBeUndefined();
    const context = tlsContextOf(value);
    expect(context?.common_tls_context.tls_certificate_sds_secret_configs?.map((secret) => secret.name)).toEqual(['default']);
    expect(context?.common_tls_context.combined_validation_context?.validation_context_sds_secret_config.name).toBe('ROOTCA');
  });

  test('ALPN follows the port: HTTP/1.1 on HTTP ports, none on opaque TCP ports', () => {
    const clusters = clustersOf(load('auto-mtls'));
    expect(tlsContextOf(cluster(clusters, `outbound|8000||${HTTPBIN}`))?.common_tls_context.alpn_protocols).toEqual(['http/1.1']);
    expect(tlsContextOf(cluster(clusters, `outbound|9000||${HTTPBIN}`))?.common_tls_context.alpn_protocols).toBeUndefined();
  });

  test('enableAutoMtls false: plain text without a rule, MESH_MUTUAL still originates mesh TLS', () => {
    expect(cluster(clustersOf(load('auto-mtls', '', { enableAutoMtls: false })), `outbound|8000||${HTTPBIN}`)).not.toHaveProperty('transport_socket_matches');
    const withRule = clustersOf(load('mesh-mutual', '', { enableAutoMtls: false }));
    expect(tlsContextOf(cluster(withRule, `outbound|8000||${HTTPBIN}`))?.sni).toBe(`outbound_.8000_._.${HTTPBIN}`);
  });

  test('SIMPLE without a CA trusts the system bundle; insecureSkipVerify drops every server check', () => {
    const verified = clustersOf(load('auto-mtls', `---\n${yamlOf('{ tls: { mode: SIMPLE, subjectAltNames: [httpbin.example.com] } }')}`));
    const context = tlsContextOf(cluster(verified, `outbound|8000||${HTTPBIN}`));
    expect(context?.common_tls_context.validation_context?.trusted_ca?.filename).toBe(SYSTEM_CA_CERTIFICATES);
    expect(sansOf(context)).toEqual(['httpbin.example.com']);
    expect(context?.common_tls_context.tls_certificates).toBeUndefined();
    expect(context?.sni).toBe(HTTPBIN);

    const customBundle = clustersOf(
      load('auto-mtls', `---\n${yamlOf('{ tls: { mode: SIMPLE } }')}`),
      newClientTlsHook({ systemCaCertificates: '/bundle.pem' }),
    );
    expect(tlsContextOf(cluster(customBundle, `outbound|8000||${HTTPBIN}`))?.common_tls_context.validation_context?.trusted_ca?.filename).toBe('/bundle.pem');

    const insecure = clustersOf(load('auto-mtls', `---\n${yamlOf('{ tls: { mode: SIMPLE, insecureSkipVerify: true } }')}`));
    const common = tlsContextOf(cluster(insecure, `outbound|8000||${HTTPBIN}`))?.common_tls_context;
    expect(common?.validation_context).toBeUndefined();
    expect(common?.combined_validation_context).toBeUndefined();
  });

  test('MUTUAL with credentialName: client certificate and CA over SDS', () => {
    const clusters = clustersOf(load('auto-mtls', `---\n${yamlOf('{ tls: { mode: MUTUAL, credentialName: client-credential } }')}`));
    const common = tlsContextOf(cluster(clusters, `outbound|8000||${HTTPBIN}`))?.common_tls_context;
    expect(common?.tls_certificate_sds_secret_configs?.map((secret) => secret.name)).toEqual(['client-credential']);
    expect(common?.combined_validation_context?.validation_context_sds_secret_config.name).toBe('client-credential-cacert');
  });

  test('an ORIGINAL_DST (PASSTHROUGH) cluster gets no label matches its hosts could never satisfy', () => {
    const clusters = clustersOf(load('auto-mtls', `---\n${yamlOf('{ loadBalancer: { simple: PASSTHROUGH } }')}`));
    const value = cluster(clusters, `outbound|8000||${HTTPBIN}`);
    expect(value['type']).toBe('ORIGINAL_DST');
    expect(value).not.toHaveProperty('transport_socket_matches');
  });

  test('inbound clusters are left alone', () => {
    const { proxy, push } = load('auto-mtls');
    const service = push.serviceByHost.get(HTTPBIN);
    const servicePort = service?.ports[0];
    if (!service || !servicePort) throw new Error('no httpbin');
    expect(newClientTlsHook()({ proxy, push, clusterName: 'inbound|8080||', direction: 'inbound', service, servicePort, targetPort: 8080 })).toBeUndefined();
  });
});

interface LbEndpointView {
  endpoint: { address: { socket_address: { address: string; port_value: number } } };
  metadata?: { filter_metadata: Record<string, unknown> };
}

function lbEndpointsOf({ push, proxy }: Loaded, clusterName: string): LbEndpointView[] {
  const assignment = buildClusterLoadAssignment(push, proxy, clusterName) as unknown as { endpoints: { lb_endpoints: LbEndpointView[] }[] };
  protos.encodeAny(ENDPOINT_TYPE, assignment);
  return assignment.endpoints.flatMap((locality) => locality.lb_endpoints);
}

describe('the tlsMode label of endpoints', () => {
  function labelled(loaded: Loaded, clusterName: string): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const endpoint of lbEndpointsOf(loaded, clusterName)) {
      const address = endpoint.endpoint.address.socket_address;
      out[`${address.address}:${address.port_value}`] = endpoint.metadata !== undefined;
    }
    return out;
  }

  test('a workload DISABLE on one container port loses the label on that port only', () => {
    const loaded = load('peer-authentication-disable');
    expect(labelled(loaded, `outbound|8000||${HTTPBIN}`)).toEqual({ '10.0.1.10:8080': true, '10.0.1.11:8080': false });
    expect(labelled(loaded, `outbound|9000||${HTTPBIN}`)).toEqual({ '10.0.1.10:9090': false, '10.0.1.11:9090': false });
    expect(labelled(loaded, 'outbound|80||legacy.foo.svc.cluster.local')).toEqual({ '10.0.1.20:8080': false });
  });

  test('a workload STRICT over a namespace DISABLE keeps the label; a mesh-wide DISABLE removes it', () => {
    const namespaceDisable = `---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: default, namespace: foo }
spec: { mtls: { mode: DISABLE } }
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: httpbin, namespace: foo }
spec: { selector: { matchLabels: { app: httpbin } }, mtls: { mode: STRICT } }`;
    expect(labelled(load('auto-mtls', namespaceDisable), `outbound|8000||${HTTPBIN}`)).toEqual({ '10.0.1.10:8080': true, '10.0.1.11:8080': false });
    const meshDisable = `---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: default, namespace: mesh-system }
spec: { mtls: { mode: DISABLE } }`;
    expect(labelled(load('auto-mtls', meshDisable), `outbound|8000||${HTTPBIN}`)).toEqual({ '10.0.1.10:8080': false, '10.0.1.11:8080': false });
  });

  test('decisions are made once per push', () => {
    const first = load('peer-authentication-disable');
    expect(endpointMeshTlsOf(first.push)).toBe(endpointMeshTlsOf(first.push));
    expect(endpointMeshTlsOf(load('peer-authentication-disable').push)).not.toBe(endpointMeshTlsOf(first.push));
  });
});

describe('what the data plane does with the generated cluster and endpoints', () => {
  test('mesh TLS with the SAN check toward the meshed port, plain text to the disabled port and the unmeshed pod', () => {
    const loaded = load('peer-authentication-disable');
    const clusters = clustersOf(loaded);
    const decide = (clusterName: string): Record<string, string> => {
      const choose = compileUpstreamTls(cluster(clusters, clusterName) as unknown as ClusterTlsConfig);
      const out: Record<string, string> = {};
      for (const endpoint of lbEndpointsOf(loaded, clusterName)) {
        const tls = choose(endpoint.metadata?.filter_metadata);
        out[endpoint.endpoint.address.socket_address.address] =
          tls.kind === 'tls'
            ? `tls ${tls.sni ?? ''} accepts httpbin=${String(tls.verifySubjectAltName?.('spiffe://cluster.local/ns/foo/sa/httpbin'))} other=${String(tls.verifySubjectAltName?.('spiffe://cluster.local/ns/bar/sa/sleep'))}`
            : 'plaintext';
      }
      return out;
    };
    expect(decide(`outbound|8000||${HTTPBIN}`)).toEqual({
      '10.0.1.10': `tls outbound_.8000_._.${HTTPBIN} accepts httpbin=true other=false`,
      '10.0.1.11': 'plaintext',
    });
    expect(decide(`outbound|9000||${HTTPBIN}`)).toEqual({ '10.0.1.10': 'plaintext', '10.0.1.11': 'plaintext' });
  });
});
