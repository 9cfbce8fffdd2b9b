import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { parse } from 'yaml';
import { fuzzParameters } from '../../testing/fuzz.js';
import { parseRenderedYaml } from './rendered-yaml.js';

const EDGES = [
  '',
  '~',
  'null',
  'Null',
  'NULL',
  'nul',
  'nulls',
  'none',
  'true',
  'True',
  'TRUE',
  'tRUE',
  'false',
  'False',
  'FALSE',
  'yes',
  'no',
  'on',
  'off',
  'y',
  'n',
  '0',
  '-0',
  '+0',
  '007',
  '0o17',
  '0o8',
  '0x1F',
  '0xg',
  '0X1F',
  '1_000',
  '12',
  '-12',
  '+12',
  '1.5',
  '-1.5',
  '.5',
  '5.',
  '1e3',
  '1E-3',
  '+1.5e+3',
  '1.e3',
  '.e3',
  '.inf',
  '-.inf',
  '+.Inf',
  '.INF',
  '.nan',
  '.NaN',
  '.NAN',
  '-.nan',
  'inf',
  'nan',
  '2001-12-14',
  '12:30',
  '0b101',
  '=',
  '-',
  '+',
  '.',
  '..',
  'n1',
  'T1',
  'f0',
  'tcp',
  'REDIRECT',
];

const sameAsYaml = (text: string): void => {
  let expected: unknown;
  try {
    expected = parse(text);
  } catch {
    return;
  }
  expect(parseRenderedYaml(text)).toEqual(expected);
};

describe('parseRenderedYaml', () => {
  test.each(EDGES)('the plain scalar %j reads as yaml reads it, as a value and as a key', (scalar) => {
    sameAsYaml(`k: ${scalar}\n`);
    sameAsYaml(`- ${scalar}\n`);
    // A null key is the one known difference (js-yaml names it "null", yaml ""): no template writes one.
    if (!['', '~', 'null', 'Null', 'NULL'].includes(scalar)) sameAsYaml(`${scalar}: v\n`);
  });

  test('any short plain scalar reads as yaml reads it', () => {
    const scalarArb = fc.string({ unit: fc.constantFrom(...'0123456789+-.eExXoOabfinltuNTFIAL~_ '.split('')), maxLength: 8 }).map((s) => s.trim());
    fc.assert(
      fc.property(scalarArb, (scalar) => {
        sameAsYaml(`k: ${scalar}\n`);
      }),
      { ...fuzzParameters(), numRuns: 2000 },
    );
  });
});
