import { describe, expect, test } from '@jest/globals';
import { endpointSummary } from '../proxyconfig/summaries.js';
import { clusterStatusesOf } from './cluster-statuses.js';

const socket = (address: string, port: number) => ({ socket_address: { address, port_value: port } });

const dump = {
  configs: [
    {
      '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
      dynamic_active_clusters: [
        { cluster: { name: 'outbound|9080||ratings.vm.svc.cluster.local', type: 'EDS' } },
        {
          cluster: {
            name: 'outbound|443||api.example.com',
            type: 'STRICT_DNS',
            load_assignment: {
              cluster_name: 'outbound|443||api.example.com',
              endpoints: [{ lb_endpoints: [{ endpoint: { address: socket('api.example.com', 443) } }] }],
            },
          },
        },
      ],
    },
    {
      '@type': 'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
      dynamic_endpoint_configs: [
        {
          endpoint_config: {
            cluster_name: 'outbound|9080||ratings.vm.svc.cluster.local',
            endpoints: [
              {
                locality: { region: 'us' },
                lb_endpoints: [
                  { endpoint: { address: socket('10.0.0.7', 9080) }, health_status: 'HEALTHY', load_balancing_weight: { value: 3 } },
                  { endpoint: { address: socket('10.0.0.8', 9080) }, health_status: 'UNHEALTHY' },
                  { endpoint: { address: socket('10.0.0.9', 9080) }, health_status: 'UNKNOWN' },
                ],
              },
            ],
          },
        },
      ],
    },
  ],
};

describe('a VM proxy endpoints from the config its daemon sent', () => {
  test('EDS assignments and clusters’ own load assignments become /clusters host statuses: health as sent (unset or UNKNOWN is HEALTHY), weight, locality', () => {
    const statuses = clusterStatusesOf(dump);
    expect(statuses.cluster_statuses.map((cluster) => cluster['name'])).toEqual([
      'outbound|443||api.example.com',
      'outbound|9080||ratings.vm.svc.cluster.local',
    ]);
    expect(statuses.cluster_statuses[1]?.['host_statuses']).toEqual([
      { address: socket('10.0.0.7', 9080), health_status: { eds_health_status: 'HEALTHY' }, weight: 3, locality: { region: 'us' } },
      { address: socket('10.0.0.8', 9080), health_status: { eds_health_status: 'UNHEALTHY' }, weight: 1, locality: { region: 'us' } },
      { address: socket('10.0.0.9', 9080), health_status: { eds_health_status: 'HEALTHY' }, weight: 1, locality: { region: 'us' } },
    ]);
  });

  test('proxy-config endpoint reads them as it reads a live proxy’s answer', () => {
    expect(endpointSummary(clusterStatusesOf(dump), { status: 'UNHEALTHY' })).toBe(
      'ENDPOINT          STATUS        OUTLIER CHECK     CLUSTER\n10.0.0.8:9080     UNHEALTHY     OK                outbound|9080||ratings.vm.svc.cluster.local\n',
    );
    expect(endpointSummary(clusterStatusesOf({ configs: [] }), {})).toBe('ENDPOINT     STATUS     OUTLIER CHECK     CLUSTER\n');
  });
});
