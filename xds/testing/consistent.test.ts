import { describe, expect, test } from '@jest/globals';
import { consistent } from './consistent.js';

const listener = (routeName: string) => ({ name: 'l', filter_chains: [{ filters: [{ typed_config: { rds: { route_config_name: routeName } } }] }] });
const route = (name: string, cluster: string) => ({ name, virtual_hosts: [{ routes: [{ route: { cluster } }] }] });
const edsCluster = (name: string) => ({ name, type: 'EDS', eds_cluster_config: { service_name: name } });

describe('consistent', () => {
  test('a snapshot that hangs together has no problems', () => {
    expect(
      consistent({
        listeners: [listener('80')],
        routes: [route('80', 'outbound|80||a')],
        clusters: [edsCluster('outbound|80||a')],
        endpoints: [{ cluster_name: 'outbound|80||a', endpoints: [] }],
      }),
    ).toEqual([]);
  });

  test('names every broken reference', () => {
    expect(
      consistent({
        listeners: [listener('80')],
        routes: [
          route('81', 'outbound|81||b'),
          { name: 'w', virtual_hosts: [{ routes: [{ route: { weighted_clusters: { clusters: [{ name: 'outbound|82||c' }] } } }] }] },
        ],
        clusters: [edsCluster('outbound|80||a')],
        endpoints: [{ cluster_name: 'outbound|90||z', endpoints: [] }],
      }),
    ).toEqual([
      'CDS cluster outbound|80||a has no EDS load assignment',
      'EDS outbound|90||z is referenced by no CDS cluster',
      'LDS references RDS 80, which is not served',
      'RDS 81 is referenced by no LDS listener',
      'RDS w is referenced by no LDS listener',
      'traffic is sent to cluster outbound|81||b, which CDS does not have',
      'traffic is sent to cluster outbound|82||c, which CDS does not have',
    ]);
  });

  test('checks only the types the snapshot holds', () => {
    expect(consistent({ routes: [route('81', 'outbound|81||b')] })).toEqual([]);
    expect(consistent({ listeners: [{ name: 'tcp', filter_chains: [{ filters: [{ typed_config: { cluster: 'gone' } }] }] }], clusters: [] })).toEqual([
      'traffic is sent to cluster gone, which CDS does not have',
    ]);
  });
});
