import { describe, expect, test } from '@jest/globals';
import { analyze, virtualService } from '../testing/fixtures.js';
import { SCHEMA_ANALYZERS } from './schema-analyzers.js';

const forKind = (kind: string) => {
  const analyzer = SCHEMA_ANALYZERS.find((a) => a.name === `schema.ValidationAnalyzer.${kind}`);
  if (analyzer === undefined) throw new Error(kind);
  return analyzer;
};

describe('schema.ValidationAnalyzer', () => {
  test('one analyzer per mesh kind', () => {
    expect(SCHEMA_ANALYZERS.map((a) => a.name)).toContain('schema.ValidationAnalyzer.VirtualService');
    expect(SCHEMA_ANALYZERS).toHaveLength(9);
  });

  test('an invalid VirtualService gets an error naming the field path', () => {
    const bad = virtualService('bad', 'default', { hosts: ['reviews'], http: [{ route: [{ destination: { host: '*' } }] }] });
    expect(analyze(forKind('VirtualService'), [bad])).toEqual([
      'Error [MSH0106] (VirtualService bad.default) Schema validation error: spec.http[0].route[0].destination.host: expected a specific destination host, got "*"',
    ]);
  });

  test('a warning is a schema warning, and the resource stays usable', () => {
    const legacy = virtualService('legacy', 'default', {
      hosts: ['reviews'],
      gateways: ['gw.other'],
      http: [{ route: [{ destination: { host: 'reviews' } }] }],
    });
    expect(analyze(forKind('VirtualService'), [legacy])).toEqual([
      'Warning [MSH0133] (VirtualService legacy.default) Schema validation warning: spec.gateways[0]: "gw.other" is the legacy "name.namespace" form: prefer "other/gw"',
    ]);
  });

  test('valid resources and resources of other kinds stay quiet', () => {
    const good = virtualService('good', 'default', { hosts: ['reviews'], http: [{ route: [{ destination: { host: 'reviews' } }] }] });
    expect(analyze(forKind('VirtualService'), [good])).toEqual([]);
    const bad = virtualService('bad', 'default', { hosts: [] });
    expect(analyze(forKind('Gateway'), [bad])).toEqual([]);
  });
});
