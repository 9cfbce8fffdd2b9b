import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../testing/fuzz.js';
import type { AuthorizationPolicy } from '../crds/index.js';
import { buildRbac } from '../xds/security/index.js';
import { compileRbacFilter, type RbacFilterConfig } from './decisions/index.js';

// Trust-domain values and principals with a wildcard in the trust domain, as the daemon builds
// them and the data plane evaluates them, against what they mean: the trust domain of a SPIFFE ID
// is what lies between `spiffe://` and the first `/`, and a `*` stands for any run of characters
// inside it. Identities are shaped from the policy's own pieces (a namespace or further segment
// spelled like the allowed trust domain, the allowed name inside a longer one, regex characters).
const piece = fc.string({ unit: fc.constantFrom(...'ab-.+()[]?^$|\\{}'.split('')), minLength: 1, maxLength: 5 });
const pattern = fc.oneof(
  piece,
  piece.map((value) => `*${value}`),
  piece.map((value) => `${value}*`),
  fc.constant('*'),
);
const segments = fc.array(fc.oneof(piece, fc.constantFrom('ns', 'sa', 'foo', 'sleep')), { minLength: 1, maxLength: 6 });

function identityArbitrary(base: string): fc.Arbitrary<string> {
  const literal = base.replaceAll('*', '');
  const domain = fc.oneof(
    fc.constant(literal),
    piece.map((p) => p + literal),
    piece.map((p) => literal + p),
    piece,
    fc.constant('cluster.local'),
  );
  return fc
    .tuple(domain, segments, fc.option(fc.constant(literal)))
    .map(([td, path, spelledLater]) => `spiffe://${td}/${(spelledLater === null ? path : [...path, spelledLater, 'x']).join('/')}`);
}

function globMatches(glob: string, value: string): boolean {
  if (glob === '*') return true;
  if (glob.startsWith('*')) return value.endsWith(glob.slice(1));
  if (glob.endsWith('*')) return value.startsWith(glob.slice(0, -1));
  return value === glob;
}

const trustDomainOf = (identity: string): string => identity.slice('spiffe://'.length).split('/')[0] as string;

function allowPolicy(source: Record<string, string[]>): AuthorizationPolicy {
  return {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: 'p', namespace: 'foo' },
    spec: { rules: [{ from: [{ source }] }] },
  };
}

function allows(policy: AuthorizationPolicy, identity: string, bundle: readonly string[]): boolean {
  const [filter] = buildRbac([policy], { trustDomain: bundle[0] as string, trustDomainAliases: bundle.slice(1), forTcp: false }).filters;
  const decide = compileRbacFilter(filter?.typed_config as RbacFilterConfig);
  const connection = {
    destinationAddress: '10.0.0.1',
    destinationPort: 8000,
    sourceAddress: '10.0.0.2',
    transportProtocol: 'tls' as const,
    peerCertificate: { uriSans: [identity], dnsSans: [], subject: '', sha256: '' },
  };
  return decide({ connection, metadata: {} }).allowed;
}

describe('trust domains matched by the built RBAC, under fuzzing', () => {
  test('trustDomains: a value matches exactly the identities whose trust domain it names (aliases standing for each other)', () => {
    fc.assert(
      fc.property(
        pattern.chain((value) => fc.tuple(fc.constant(value), identityArbitrary(value), fc.boolean())),
        ([value, identity, withAlias]) => {
          const bundle = withAlias && !value.includes('*') ? ['mesh.td', value] : ['cluster.local'];
          const domain = trustDomainOf(identity);
          const expected = bundle.includes(value) ? bundle.includes(domain) : globMatches(value, domain);
          expect(allows(allowPolicy({ trustDomains: [value] }), identity, bundle)).toBe(expected);
          expect(allows(allowPolicy({ notTrustDomains: [value] }), identity, bundle)).toBe(!expected);
        },
      ),
      fuzzParameters({ numRuns: 400, longRuns: 20_000 }),
    );
  });

  test('principals: a wildcard in the trust domain of <td>/ns/<ns>/sa/<sa> never reaches past it', () => {
    // Besides the identities above, ones whose later segments end like the principal's trust domain.
    const lookalike = (value: string): fc.Arbitrary<string> =>
      fc.tuple(piece, segments, piece).map(([td, path, before]) => `spiffe://${td}/${path.join('/')}/${before}${value}/ns/foo/sa/sleep`);
    fc.assert(
      fc.property(
        piece.chain((value) => fc.tuple(fc.constant(value), fc.oneof(identityArbitrary(value), lookalike(value)))),
        fc.boolean(),
        ([value, identity], whole) => {
          const glob = whole ? '*' : `*${value}`;
          const rest = identity.slice('spiffe://'.length).split('/').slice(1).join('/');
          // The principal names exactly the rest of the identity when it has four segments.
          const principal = `${glob}/${rest.split('/').length === 4 ? rest : 'ns/foo/sa/sleep'}`;
          const domain = trustDomainOf(identity);
          const expected = `spiffe://${domain}/${principal.slice(glob.length + 1)}` === identity && domain !== '' && globMatches(glob, domain);
          expect(allows(allowPolicy({ principals: [principal] }), identity, ['cluster.local'])).toBe(expected);
        },
      ),
      fuzzParameters({ numRuns: 400, longRuns: 20_000 }),
    );
  });
});
