import { describe, expect, test } from '@jest/globals';
import { analyze, virtualService } from '../testing/fixtures.js';
import { SCHEMA_ANALYZERS } from './schema-analyzers.js';

const analyzer = SCHEMA_ANALYZERS.find((a) => a.name === 'schema.ValidationAnalyzer.VirtualService');
if (analyzer === undefined) throw new Error('no VirtualService schema analyzer');
const to = (host: string): object[] => [{ destination: { host } }];
const http = (...routes: object[]): object => virtualService('vs', 'default', { hosts: ['reviews'], http: routes });
const run = (vs: object): string[] => analyze(analyzer, [vs]);
const origin = '(VirtualService vs.default)';

describe('schema.ValidationAnalyzer.VirtualService: unreachable rules (MSH0130) and ineffective matches (MSH0131)', () => {
  test('a rule after a rule without matches is never used, for each of its matches', () => {
    expect(run(http({ route: to('a') }, { match: [{ uri: { exact: '/x' } }], route: to('b') }))).toEqual([
      `Warning [MSH0130] ${origin} VirtualService rule #1 not used (route without matches defined before).`,
    ]);
  });

  test('only the last rule can have no matches', () => {
    expect(run(http({ route: to('a') }, { name: 'fallback', route: to('b') }))).toEqual([
      `Warning [MSH0130] ${origin} VirtualService rule "fallback" not used (only the last rule can have no matches).`,
    ]);
  });

  test('a match an earlier rule has is ineffective, whatever its key order and name; a rule of such matches alone is unreachable', () => {
    const vs = http(
      { name: 'first', match: [{ name: 'm', headers: { a: { exact: '1' } }, uri: { exact: '/x' } }], route: to('a') },
      { match: [{ uri: { exact: '/x' }, headers: { a: { exact: '1' } }, ignoreUriCase: false }], route: to('b') },
      { match: [{ uri: { exact: '/x' } }, { name: 'again', uri: { exact: '/x' }, headers: { a: { exact: '1' } } }], route: to('c') },
    );
    expect(run(vs)).toEqual([
      `Warning [MSH0130] ${origin} VirtualService rule #1 not used (all matches used by prior rules).`,
      `Info [MSH0131] ${origin} VirtualService rule #1 match #0 is not used (duplicate/overlapping match in rule "first").`,
      `Info [MSH0131] ${origin} VirtualService rule #2 match "again" is not used (duplicate/overlapping match in rule "first").`,
    ]);
  });

  test('a uri prefix covering a later one (a match without method being GET) makes the later match ineffective', () => {
    const vs = http(
      { match: [{ uri: { prefix: '/api' } }], route: to('a') },
      {
        match: [
          { uri: { prefix: '/api/v1' }, method: { exact: 'GET' } },
          { uri: { prefix: '/api/v2' }, method: { exact: 'POST' } },
        ],
        route: to('b'),
      },
    );
    expect(run(vs)).toEqual([
      `Info [MSH0131] ${origin} VirtualService rule #1 match #0 of prefix /api/v1 is not used (duplicate/overlapping match in rule #0 of prefix /api on #0).`,
    ]);
  });

  test('tcp and tls rules: duplicate matches and rules after a catch-all, named by index', () => {
    const vs = virtualService('vs', 'default', {
      hosts: ['db.example.com'],
      tcp: [{ match: [{ port: 3306 }], route: to('a') }, { match: [{ port: 3306 }, { port: 3307 }], route: to('b') }, { route: to('c') }, { route: to('d') }],
      tls: [
        { match: [{ sniHosts: ['db.example.com'], port: 443 }], route: to('a') },
        { match: [{ port: 443, sniHosts: ['db.example.com'] }], route: to('b') },
      ],
    });
    expect(run(vs)).toEqual([
      `Warning [MSH0130] ${origin} VirtualService rule #1 not used (all matches used by prior rules).`,
      `Warning [MSH0130] ${origin} VirtualService rule #3 not used (only the last rule can have no matches).`,
      `Info [MSH0131] ${origin} VirtualService rule #1 match #0 is not used (duplicate/overlapping match in rule #0).`,
    ]);
  });

  test.each([
    ['distinct matches and a catch-all last', http({ match: [{ uri: { exact: '/a' } }], route: to('a') }, { route: to('b') })],
    [
      'a later broader prefix, and prefixes with other methods',
      http(
        { match: [{ uri: { prefix: '/api/v1' } }], route: to('a') },
        { match: [{ uri: { prefix: '/api' } }], route: to('b') },
        { match: [{ uri: { prefix: '/api/v1/x' }, method: { exact: 'POST' } }], route: to('c') },
      ),
    ],
    [
      'the same prefix with other headers',
      http({ match: [{ uri: { prefix: '/a' }, headers: { x: { exact: '1' } } }], route: to('a') }, { match: [{ uri: { prefix: '/a/b' } }], route: to('b') }),
    ],
  ])('%s stay quiet', (_case, vs) => {
    expect(run(vs)).toEqual([]);
  });
});
