import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { expectGolden, goldenCases } from '../../testing/golden.js';
import { validateResource, type AuthorizationPolicy } from '../../crds/index.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../index.js';
import {
  RBAC_HTTP_FILTER_NAME,
  RBAC_HTTP_TYPE_URL,
  RBAC_NETWORK_FILTER_NAME,
  RBAC_NETWORK_TYPE_URL,
  buildRbac,
  type BuiltRbac,
  type RbacFilter,
} from './index.js';

const TESTDATA = fileURLToPath(new URL('./testdata/rbac/', import.meta.url));
const HTTP_FILTER_TYPE = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter';
const NETWORK_FILTER_TYPE = 'type.googleapis.com/envoy.config.listener.v3.Filter';
const OPTIONS = { trustDomain: 'cluster.local' };

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

function readPolicies(file: string): AuthorizationPolicy[] {
  const documents = parseAllDocuments(readFileSync(join(TESTDATA, file), 'utf8'));
  return documents.map((document) => {
    const result = validateResource(document.toJS());
    expect(result.errors).toEqual([]);
    return result.resource as AuthorizationPolicy;
  });
}

/** Proves each filter is a valid Envoy message: the filter itself (with its nested Any) and its config alone. */
function encodeAll(built: BuiltRbac, forTcp: boolean): void {
  for (const filter of built.filters) {
    const { '@type': typeUrl, ...config } = filter.typed_config;
    expect(typeUrl).toBe(forTcp ? RBAC_NETWORK_TYPE_URL : RBAC_HTTP_TYPE_URL);
    expect(filter.name).toBe(forTcp ? RBAC_NETWORK_FILTER_NAME : RBAC_HTTP_FILTER_NAME);
    protos.encodeAny(typeUrl, config);
    protos.encodeAny(forTcp ? NETWORK_FILTER_TYPE : HTTP_FILTER_TYPE, filter);
  }
}

function build(policies: AuthorizationPolicy[], forTcp: boolean): BuiltRbac {
  const built = buildRbac(policies, { ...OPTIONS, forTcp });
  encodeAll(built, forTcp);
  return built;
}

const cases = goldenCases(TESTDATA);

describe('buildRbac golden files', () => {
  test('there are at least 10 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(10);
  });

  test.each(cases)('%s', (name) => {
    const policies = readPolicies(`${name}.in.yaml`);
    const http = build(policies, false);
    const tcp = build(policies, true);
    expectGolden(TESTDATA, name, { http: http.filters, http_skipped: http.skipped, tcp: tcp.filters, tcp_skipped: tcp.skipped });
  });
});

function rulesOf(filter: RbacFilter | undefined) {
  return filter?.typed_config.rules;
}

const NO_VALID_JWT = {
  not_id: {
    and_ids: {
      ids: [
        {
          metadata: {
            filter: 'envoy.filters.http.jwt_authn',
            path: [{ key: 'payload' }, { key: 'iss' }],
            value: { string_match: { safe_regex: { regex: '.+' } } },
          },
        },
        {
          metadata: {
            filter: 'envoy.filters.http.jwt_authn',
            path: [{ key: 'payload' }, { key: 'sub' }],
            value: { string_match: { safe_regex: { regex: '.+' } } },
          },
        },
      ],
    },
  },
};

describe('buildRbac behaviour', () => {
  test('no policy: no filter at all', () => {
    expect(buildRbac([], { ...OPTIONS, forTcp: false }).filters).toEqual([]);
    expect(buildRbac([], { ...OPTIONS, forTcp: true }).filters).toEqual([]);
  });

  test('seed: DENY notRequestPrincipals ["*"] denies requests without a valid JWT', () => {
    const [filter, ...rest] = build(readPolicies('seed-deny-without-jwt.in.yaml'), false).filters;
    expect(rest).toEqual([]);
    expect(rulesOf(filter)).toEqual({
      action: 'DENY',
      policies: {
        'ns[mesh-system]-policy[frontend-ingress]-rule[0]': {
          permissions: [{ and_rules: { rules: [{ any: true }] } }],
          principals: [{ and_ids: { ids: [NO_VALID_JWT] } }],
        },
      },
    });
  });

  test('seed: with to.operation.paths the DENY applies to those paths only', () => {
    const [filter] = build(readPolicies('seed-deny-without-jwt-paths.in.yaml'), false).filters;
    const policy = rulesOf(filter)?.policies['ns[mesh-system]-policy[frontend-ingress]-rule[0]'];
    expect(policy?.permissions).toEqual([{ and_rules: { rules: [{ or_rules: { rules: [{ url_path: { path: { exact: '/headers' } } }] } }] } }]);
    expect(policy?.principals).toEqual([{ and_ids: { ids: [NO_VALID_JWT] } }]);
  });

  test('TCP: a DENY rule loses its HTTP-only fields and denies more', () => {
    const [filter] = build(readPolicies('seed-deny-without-jwt-paths.in.yaml'), true).filters;
    expect(filter?.typed_config.stat_prefix).toBe('tcp.');
    expect(rulesOf(filter)?.policies['ns[mesh-system]-policy[frontend-ingress]-rule[0]']).toEqual({
      permissions: [{ and_rules: { rules: [{ any: true }] } }],
      principals: [{ and_ids: { ids: [{ any: true }] } }],
    });
  });

  test('TCP: an ALLOW rule with an HTTP-only field is dropped, the others stay', () => {
    const built = build(readPolicies('allow-http-fields-on-tcp.in.yaml'), true);
    expect(Object.keys(rulesOf(built.filters[0])?.policies ?? {})).toEqual(['ns[foo]-policy[allow-mixed]-rule[1]']);
    expect(built.skipped).toEqual([{ policy: 'ns[foo]-policy[allow-mixed]-rule[0]', problem: '"paths" is HTTP only' }]);
  });

  test('TCP: an ALLOW filter whose rules are all dropped has no policies and denies everything', () => {
    const policies = readPolicies('operations.in.yaml');
    const [filter] = build(policies, true).filters;
    expect(rulesOf(filter)).toEqual({ action: 'ALLOW', policies: {} });
  });

  test('ALLOW without rules never matches; rules [{}] matches everything', () => {
    const [nothing] = build(readPolicies('allow-nothing.in.yaml'), false).filters;
    expect(rulesOf(nothing)?.policies['ns[foo]-policy[allow-nothing]-rule[0]']).toEqual({
      permissions: [{ not_rule: { any: true } }],
      principals: [{ not_id: { any: true } }],
    });
    const [all] = build(readPolicies('allow-all.in.yaml'), false).filters;
    expect(rulesOf(all)?.policies['ns[foo]-policy[allow-all]-rule[0]']).toEqual({
      permissions: [{ and_rules: { rules: [{ any: true }] } }],
      principals: [{ and_ids: { ids: [{ any: true }] } }],
    });
  });

  test('filters come in the order AUDIT, DENY, ALLOW; CUSTOM is not built; dry-run goes to shadow rules', () => {
    const { filters } = build(readPolicies('audit-deny-allow-dry-run.in.yaml'), false);
    expect(filters.map((filter) => filter.typed_config.rules?.action)).toEqual(['LOG', 'DENY', 'ALLOW']);
    const deny = filters[1]?.typed_config;
    expect(Object.keys(deny?.rules?.policies ?? {})).toEqual(['ns[mesh-system]-policy[deny-blocked]-rule[0]']);
    expect(Object.keys(deny?.shadow_rules?.policies ?? {})).toEqual(['ns[foo]-policy[deny-legacy]-rule[0]']);
    expect(deny?.shadow_rules_stat_prefix).toBe('mesh_dry_run_deny_');
    expect(filters[2]?.typed_config.shadow_rules_stat_prefix).toBe('mesh_dry_run_allow_');
  });

  test('user strings placed in regexes are escaped', () => {
    const policy = readPolicies('sources.in.yaml')[0] as AuthorizationPolicy;
    const withDots: AuthorizationPolicy = {
      ...policy,
      spec: { rules: [{ from: [{ source: { principals: ['*.evil/sa/a+b'] } }, { source: { serviceAccounts: ['a.b'] } }] }] },
    };
    const [filter] = build([withDots], false).filters;
    const text = JSON.stringify(rulesOf(filter));
    expect(text).toContain(JSON.stringify('spiffe://.*\\.evil/sa/a\\+b'));
    expect(text).toContain(JSON.stringify('spiffe://.+/ns/foo/(.+/|)sa/a\\.b(/.+)?'));
  });

  test('principals of the mesh trust domain are expanded to its aliases', () => {
    const policy: AuthorizationPolicy = {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'p', namespace: 'foo' },
      spec: { rules: [{ from: [{ source: { principals: ['cluster.local/ns/foo/sa/sleep', 'other.org/ns/foo/sa/x'] } }] }] },
    };
    const [filter] = buildRbac([policy], { trustDomain: 'td.example', trustDomainAliases: ['old.example'], forTcp: false }).filters;
    const principal = rulesOf(filter)?.policies['ns[foo]-policy[p]-rule[0]']?.principals[0];
    expect(principal).toEqual({
      and_ids: {
        ids: [
          {
            or_ids: {
              ids: [
                { authenticated: { principal_name: { exact: 'spiffe://td.example/ns/foo/sa/sleep' } } },
                { authenticated: { principal_name: { exact: 'spiffe://old.example/ns/foo/sa/sleep' } } },
                { authenticated: { principal_name: { exact: 'spiffe://other.org/ns/foo/sa/x' } } },
              ],
            },
          },
        ],
      },
    });
  });

  test('trust-domain values naming the mesh trust domain or an alias stand for all of them; others are kept', () => {
    const policy: AuthorizationPolicy = {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'p', namespace: 'foo' },
      spec: {
        rules: [{ from: [{ source: { trustDomains: ['cluster.local', 'other.org'] } }], when: [{ key: 'source.trustDomain', notValues: ['td1'] }] }],
      },
    };
    const [filter] = buildRbac([policy], { trustDomain: 'td1', trustDomainAliases: ['cluster.local'], forTcp: false }).filters;
    const text = JSON.stringify(rulesOf(filter)?.policies['ns[foo]-policy[p]-rule[0]']?.principals);
    const prefixes = [...text.matchAll(/"prefix":"([^"]+)"/g)].map((match) => match[1]);
    expect(prefixes).toEqual(['spiffe://td1/', 'spiffe://cluster.local/', 'spiffe://other.org/', 'spiffe://td1/', 'spiffe://cluster.local/']);
  });

  test('a trust domain or namespace that validation would refuse never widens a match: the ALLOW rule is dropped, the DENY value', () => {
    const withSource = (action: 'ALLOW' | 'DENY', source: Record<string, string[]>): AuthorizationPolicy => ({
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'p', namespace: 'foo' },
      spec: { action, rules: [{ from: [{ source }] }] },
    });
    const sources: Record<string, string[]>[] = [
      { trustDomains: ['cluster.local/ns/prod'] },
      { trustDomains: ['a*b'] },
      { trustDomains: ['*a*'] },
      { namespaces: ['prod/sa/admin'] },
    ];
    for (const source of sources) {
      const allow = buildRbac([withSource('ALLOW', source)], { ...OPTIONS, forTcp: false });
      expect(rulesOf(allow.filters[0])?.policies).toEqual({});
      expect(allow.skipped[0]?.problem).toMatch(/^invalid (trust domain|namespace) "/);
      const [deny] = buildRbac([withSource('DENY', source)], { ...OPTIONS, forTcp: false }).filters;
      expect(rulesOf(deny)?.policies['ns[foo]-policy[p]-rule[0]']?.principals).toEqual([{ and_ids: { ids: [{ any: true }] } }]);
    }
  });

  test('an unknown field anywhere in a built filter would fail encoding', () => {
    const [filter] = build(readPolicies('allow-all.in.yaml'), false).filters;
    const broken = { ...filter, typed_config: { ...filter?.typed_config, not_a_field: true } };
    expect(() => protos.encodeAny(HTTP_FILTER_TYPE, broken)).toThrow(/not_a_field/);
  });
});
