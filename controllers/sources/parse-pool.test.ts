import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { parseConfigFile } from './config-file-parser.js';
import type { newParsePool as NewParsePool } from './parse-pool.js';

// The worker threads need the compiled worker script: the pool is taken from the build (`npm run
// build`), as the daemon runs it. Uncompiled, the same pool parses on the calling thread.
const files = Array.from({ length: 24 }, (_, i) => ({
  path: `/config/policies-${i}.yaml`,
  text: Array.from({ length: 20 }, (_, j) => `apiVersion: security.mesh.io/v1beta1\nkind: PeerAuthentication\nmetadata: { name: p-${i}-${j}, namespace: ns-${j} }\nspec: { mtls: { mode: STRICT } }\n`).join('---\n') + (i === 7 ? '---\nkind: [broken\n' : ''),
}));

describe('the parse pool', () => {
  test('on worker threads (the build) it gives exactly what parsing on this thread gives, in the same order', async () => {
    const { newParsePool } = (await import(pathToFileURL(join(PROJECT_ROOT, 'dist/controllers/sources/parse-pool.js')).href)) as { newParsePool: typeof NewParsePool };
    const pool = newParsePool({ workers: 2, minParallelBytes: 0 });
    try {
      const parsed = await pool.parse(files);
      expect(pool.threads()).toBe(2);
      expect(parsed).toEqual(files.map((file) => parseConfigFile(file.path, file.text)));
      expect(parsed[7]?.parsed).toBe(false);
      // A small batch stays on this thread.
      const small = newParsePool({ workers: 2 });
      expect(await small.parse(files.slice(0, 3))).toEqual(files.slice(0, 3).map((file) => parseConfigFile(file.path, file.text)));
      expect(small.threads()).toBe(0);
    } finally {
      await pool.close();
    }
    expect(pool.threads()).toBe(0);
  });
});
