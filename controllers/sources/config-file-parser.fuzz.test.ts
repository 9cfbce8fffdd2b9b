import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../../testing/fuzz.js';
import { parseConfigFile } from './config-file-parser.js';

// The config folder's parser on whatever a file holds: documents or problems, never a throw.
describe('parseConfigFile under fuzzing', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 400 }),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc
      .array(fc.constantFrom('---\n', 'kind: ', 'apiVersion: ', '{', '[', '- ', ': ', '&a ', '*a', '!!binary ', '"', '\t', '\n', 'spec:\n  ', '%YAML 1.2\n'), {
        maxLength: 60,
      })
      .map((parts) => parts.join('')),
  );
  test.each(['policy.yaml', 'policy.json'])('%s: any text is parsed into documents or problems', (file) => {
    fc.assert(
      fc.property(text, (content) => {
        const parsed = parseConfigFile(file, content);
        expect(parsed).toBeDefined();
      }),
      fuzzParameters(),
    );
  });
});
