import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { expectGolden, goldenCases } from '../../testing/golden.js';
import {
  applyMeshConfig,
  DEFAULT_MESH_CONFIG,
  parseMeshConfigInput,
  resolveExtAuthzProvider,
  validateResource,
  type AuthorizationPolicy,
  type MeshConfig,
  type ProviderServiceRef,
} from '../../crds/index.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../index.js';
import { buildCustomAuthz, EXT_AUTHZ_HTTP_TYPE_URL, EXT_AUTHZ_NETWORK_TYPE_URL, type BuiltCustomAuthz } from './index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/custom/', import.meta.url));
const HTTP_FILTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const NETWORK_FILTER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Filter';

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

interface CustomCase {
  meshConfig: MeshConfig;
  services: ProviderServiceRef[];
  policies: AuthorizationPolicy[];
}

/** A case: a `MeshConfig` document (its `spec` as written), Services (name and namespace) and AuthorizationPolicies. */
function readCase(file: string): CustomCase {
  const out: CustomCase = { meshConfig: DEFAULT_MESH_CONFIG, services: [], policies: [] };
  for (const document of parseAllDocuments(readFileSync(join(TESTDATA, file), 'utf8'))) {
    const object = document.toJS() as { kind: string; spec?: unknown; metadata?: { name: string; namespace: string }; hostname?: string };
    if (object.kind === 'MeshConfig') {
      const parsed = parseMeshConfigInput(object.spec);
      if (!parsed.success) throw new Error(`${file}: ${JSON.stringify(parsed.error.issues)}`);
      out.meshConfig = applyMeshConfig(DEFAULT_MESH_CONFIG, parsed.data);
    } else if (object.kind === 'Service') {
      const { name, namespace } = object.metadata as { name: string; namespace: string };
      out.services.push({ hostname: object.hostname ?? `${name}.${namespace}.svc.cluster.local`, namespace });
    } else {
      const result = validateResource(object);
      expect(result.errors).toEqual([]);
      out.policies.push(result.resource as AuthorizationPolicy);
    }
  }
  return out;
}

function build(input: CustomCase, forTcp: boolean): BuiltCustomAuthz {
  const servicesByHost = (hostname: string): ProviderServiceRef[] => input.services.filter((service) => service.hostname === hostname);
  const built = buildCustomAuthz(input.policies, {
    trustDomain: 'cluster.local',
    forTcp,
    resolve: (name) => resolveExtAuthzProvider(name, input.meshConfig.extensionProviders, servicesByHost),
  });
  // Every filter is a valid Envoy message, as a filter of its chain and as its config alone.
  for (const filter of built.filters) {
    const { '@type': typeUrl, ...config } = filter.typed_config;
    protos.encodeAny(typeUrl, config);
    protos.encodeAny(forTcp ? NETWORK_FILTER_TYPE : HTTP_FILTER_TYPE, filter);
  }
  return built;
}

const cases = goldenCases(TESTDATA);

describe('buildCustomAuthz golden files', () => {
  test.each(cases)('%s', (name) => {
    const input = readCase(`${name}.in.yaml`);
    const http = build(input, false);
    const tcp = build(input, true);
    expectGolden(TESTDATA, name, { http: http.filters, http_skipped: http.skipped, tcp: tcp.filters, tcp_skipped: tcp.skipped, problems: http.problems });
  });
});

describe('buildCustomAuthz behaviour', () => {
  test('the ext_authz filter is asked only for the rules of its own provider, whatever their names share', () => {
    const input = readCase('providers-and-dry-run.in.yaml');
    const { filters } = build(input, false);
    const matchers = filters
      .filter((filter) => filter.typed_config['@type'] === EXT_AUTHZ_HTTP_TYPE_URL)
      .map((filter) => (filter.typed_config['filter_enabled_metadata'] as { value: { string_match: { prefix: string } } }).value.string_match.prefix);
    expect(matchers).toEqual(['mesh-ext-authz-a-authz-ns[', 'mesh-ext-authz-b-authz-ns[']);
    const shadowNames = filters.flatMap((filter) => Object.keys((filter.typed_config['shadow_rules'] as { policies?: object } | undefined)?.policies ?? {}));
    for (const prefix of matchers) expect(shadowNames.filter((name) => name.startsWith(prefix)).length).toBe(1 + (prefix.includes('a-authz') ? 1 : 0));
  });

  test('an HTTP authorizer installs nothing on TCP; a gRPC one gets the network filter', () => {
    expect(build(readCase('http-provider.in.yaml'), true).filters).toEqual([]);
    const tcp = build(readCase('grpc-provider.in.yaml'), true).filters;
    expect(tcp.map((filter) => filter.name)).toEqual(['envoy.filters.network.rbac', 'envoy.filters.network.ext_authz']);
    expect(tcp[1]?.typed_config['@type']).toBe(EXT_AUTHZ_NETWORK_TYPE_URL);
  });

  test('a bad provider denies exactly the rules that named it: no rule, no deny', () => {
    const { filters, problems } = build(readCase('bad-providers.in.yaml'), false);
    const denied = filters.flatMap((filter) => Object.keys((filter.typed_config['rules'] as { policies: object }).policies));
    expect(denied.every((name) => name.endsWith('-deny-due-to-bad-CUSTOM-action'))).toBe(true);
    expect(denied).toHaveLength(4);
    expect(problems.map((problem) => problem.problem)).toEqual([
      expect.stringContaining('found authz.example.com in multiple namespaces [bar foo]'),
      expect.stringContaining('could not find service missing.foo.svc.cluster.local'),
      'available providers are [prometheus envoy no-service ambiguous tracer] but found "not-defined"',
      'extension provider "tracer" is not an external authorizer (envoyExtAuthzHttp or envoyExtAuthzGrpc)',
    ]);
  });
});
