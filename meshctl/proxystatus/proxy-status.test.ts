import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectGoldenText } from '../../testing/golden.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { parseConfigDump } from '../proxyconfig/config-dump.js';
import { compareConfigDumps, parseSyncz, statusTable } from './proxy-status.js';

const TESTDATA = join(PROJECT_ROOT, 'meshctl', 'proxystatus', 'testdata');
const RECORDED_DUMP = join(PROJECT_ROOT, 'cli', 'testdata', 'proxy-config', 'productpage.config_dump.json');

describe('proxy-status', () => {
  test('the table over two daemons’ recorded syncz: sorted by cluster then proxy, the reference’s status words (golden)', () => {
    const byDaemon = new Map(
      ['meshd-a', 'meshd-b'].map((daemon) => [daemon, parseSyncz(daemon, readFileSync(join(TESTDATA, `syncz-${daemon}.json`), 'utf8'))]),
    );
    expectGoldenText(join(TESTDATA, 'status-table.golden.txt'), statusTable(byDaemon));
  });

  test('a daemon answer that is not syncz is named', () => {
    expect(() => parseSyncz('meshd-x', '{"proxies": 1}')).toThrow('meshd-x: /debug/syncz is not a list of proxies');
    expect(() => parseSyncz('meshd-x', 'oops')).toThrow('meshd-x: /debug/syncz is not JSON');
  });

  test('one proxy: Match per kind, or a unified diff, daemon first (golden)', () => {
    const text = readFileSync(RECORDED_DUMP, 'utf8');
    const dump = parseConfigDump(text, 'recorded');
    expect(compareConfigDumps(dump, dump)).toBe('Clusters Match\nListeners Match\nRoutes Match (RDS last loaded at Tue, 24 Nov 2026 12:00:00 GMT)\n');
    // The proxy still holds an older connect timeout on its first cluster.
    const stale = parseConfigDump(text.replace('"seconds": "10"', '"seconds": "5"'), 'stale');
    expectGoldenText(join(TESTDATA, 'compare-stale.golden.txt'), compareConfigDumps(dump, stale));
  });
});
