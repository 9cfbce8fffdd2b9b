import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { buildFlagFixture } from './testing/flag-reads-fixture.js';
import { flagUses, programOf, withActionSites } from './testing/flag-reads.js';

// The project-wide flag check runs in `npm run check` (cli/testing/check-types-and-flags.ts), on
// the type checker it already builds; this pins what it counts as read on a small program.
describe('flagUses', () => {
  test('a flag read directly, through a copy or through a group counts; one never read, or missing from the options type, does not', () => {
    const fixture = fileURLToPath(new URL('./testing/flag-reads-fixture.ts', import.meta.url));
    const { programs, sites } = withActionSites(() => [buildFlagFixture()]);
    expect([...sites.values()].map((site) => site.file)).toEqual([fixture]);
    const uses = flagUses(programs, sites, programOf([fixture]), [fixture]);
    expect(uses).toEqual([
      { command: 'fixture', flag: '--group', read: true },
      { command: 'fixture run', flag: '--direct', read: true },
      { command: 'fixture run', flag: '--copied', read: true },
      { command: 'fixture run', flag: '--ignored', read: false },
      { command: 'fixture run', flag: '--undeclared', read: false },
    ]);
  });
});
