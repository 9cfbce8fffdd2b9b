import { describe, expect, test } from '@jest/globals';
import { renderXdsVersion, type XdsVersionReport } from './xds-version.js';
import { internalDebugHint } from './internal-debug.js';

const client = { version: '1.2.0', gitRevision: 'abc', nodeVersion: 'v22', buildStatus: 'Clean', gitTag: '1.2.0' };
const daemon = (ID: string, version: string): NonNullable<XdsVersionReport['meshVersion']>[number] => ({
  Component: 'meshd',
  ID,
  Revision: 'default',
  Info: { version },
});

describe('x version output', () => {
  test('one control plane line when the daemons agree; data plane versions grouped, most proxies first', () => {
    const report: XdsVersionReport = {
      clientVersion: client,
      meshVersion: [daemon('meshd-a', '1.2.0'), daemon('meshd-b', '1.2.0')],
      dataPlaneVersion: [
        { ID: 'a.foo', MeshVersion: '1.1.0' },
        { ID: 'b.foo', MeshVersion: '1.2.0' },
        { ID: 'c.foo', MeshVersion: '1.2.0' },
      ],
    };
    expect(renderXdsVersion(report, { short: true })).toBe(
      'client version: 1.2.0\ncontrol plane version: 1.2.0\ndata plane version: 1.2.0 (2 proxies), 1.1.0 (1 proxies)\n',
    );
  });

  test('one line per daemon when they differ; none without proxies; the client alone with --remote=false', () => {
    const report: XdsVersionReport = { clientVersion: client, meshVersion: [daemon('meshd-a', '1.2.0'), daemon('meshd-b', '1.1.0')], dataPlaneVersion: [] };
    expect(renderXdsVersion(report, { short: true })).toBe('client version: 1.2.0\nmeshd-a version: 1.2.0\nmeshd-b version: 1.1.0\ndata plane version: none\n');
    expect(renderXdsVersion({ clientVersion: client }, { short: true })).toBe('client version: 1.2.0\n');
  });
});

describe('internal-debug hints', () => {
  test.each([
    [
      '3 INVALID_ARGUMENT: unknown debug resource "x": one of syncz, adsz',
      'error: according to below command list, please check all supported internal debug commands\nsyncz\nadsz',
    ],
    ['you must provide a proxyID in the query string', 'error: please check the query string of the debug command\ne.g. config_dump?proxyID=<pod>.<namespace>'],
    [
      'you must provide a resource query parameter: <Kind>/<namespace>/<name>',
      'error: please check the query string of the debug command\ne.g. config_distribution?resource=VirtualService/default/bookinfo',
    ],
    ['14 UNAVAILABLE: connection refused', undefined],
  ])('%s', (problem, hint) => {
    expect(internalDebugHint(problem)).toBe(hint);
  });
});
