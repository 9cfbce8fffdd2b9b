import { describe, expect, test } from '@jest/globals';
import { analyze, destinationRule, pod, service } from '../testing/fixtures.js';
import { caCertificateAnalyzer, subsetSelectPodAnalyzer } from './destination-rule-analyzers.js';

describe('destinationrule.CaCertificateAnalyzer', () => {
  const unverified = (name: string, mode: string, port?: number): string =>
    `Warning [${port === undefined ? 'MSH0128' : 'MSH0129'}] (DestinationRule ${name}.shop) DestinationRule shop/${name} in namespace shop has TLS mode set to ${mode} but no caCertificates are set to validate server identity for host: db.example.com${port === undefined ? '' : ` at port number:${port}`}`;

  test('SIMPLE or MUTUAL without caCertificates, at the destination and per port', () => {
    const objects = [
      destinationRule('simple', 'shop', { host: 'db.example.com', trafficPolicy: { tls: { mode: 'SIMPLE' } } }),
      destinationRule('both', 'shop', {
        host: 'db.example.com',
        trafficPolicy: {
          tls: { mode: 'MUTUAL', clientCertificate: '/c.pem', privateKey: '/k.pem' },
          portLevelSettings: [
            { port: { number: 443 }, tls: { mode: 'SIMPLE' } },
            { port: { number: 8443 }, tls: { mode: 'SIMPLE', caCertificates: '/ca.pem' } },
          ],
        },
      }),
    ];
    expect(analyze(caCertificateAnalyzer, objects)).toEqual([unverified('both', 'MUTUAL'), unverified('simple', 'SIMPLE'), unverified('both', 'SIMPLE', 443)]);
  });

  test('a credentialName counts only with a workloadSelector', () => {
    const spec = (extra: object): object => ({
      host: 'db.example.com',
      trafficPolicy: {
        tls: { mode: 'SIMPLE', credentialName: 'db-ca' },
        portLevelSettings: [{ port: { number: 443 }, tls: { mode: 'SIMPLE', credentialName: 'db-ca' } }],
      },
      ...extra,
    });
    expect(analyze(caCertificateAnalyzer, [destinationRule('cred', 'shop', spec({}))])).toEqual([
      unverified('cred', 'SIMPLE'),
      unverified('cred', 'SIMPLE', 443),
    ]);
    expect(analyze(caCertificateAnalyzer, [destinationRule('cred', 'shop', spec({ workloadSelector: { matchLabels: { app: 'a' } } }))])).toEqual([]);
  });

  test.each([
    [
      'a CA at both levels',
      {
        tls: { mode: 'SIMPLE', caCertificates: '/ca.pem' },
        portLevelSettings: [{ port: { number: 1 }, tls: { mode: 'MUTUAL', caCertificates: '/ca.pem', clientCertificate: '/c.pem', privateKey: '/k.pem' } }],
      },
    ],
    ['mesh mTLS', { tls: { mode: 'MESH_MUTUAL' } }],
    ['TLS disabled', { tls: { mode: 'DISABLE' } }],
    ['no TLS at all', { loadBalancer: { simple: 'RANDOM' } }],
  ])('%s stays quiet', (_case, trafficPolicy) => {
    expect(analyze(caCertificateAnalyzer, [destinationRule('r', 'shop', { host: 'db.example.com', trafficPolicy })])).toEqual([]);
  });
});

describe('destinationrule.SubsetSelectPodAnalyzer', () => {
  const reviews = service('reviews', 'shop', { app: 'reviews' }, [{ name: 'http', port: 9080 }]);
  const v1 = pod('reviews-v1', 'shop', { labels: { app: 'reviews', version: 'v1' } });
  const subsets = [
    { name: 'v1', labels: { version: 'v1' } },
    { name: 'v2', labels: { version: 'v2' } },
  ];

  test('a subset no pod carries the labels of is reported; a host that is no Service is reported instead of its subsets', () => {
    const objects = [
      reviews,
      v1,
      destinationRule('reviews', 'shop', { host: 'reviews', subsets }),
      destinationRule('ghost', 'shop', { host: 'ghost', subsets }),
      destinationRule('wild', 'shop', { host: '*.shop.svc.cluster.local' }),
    ];
    expect(analyze(subsetSelectPodAnalyzer, objects)).toEqual([
      'Error [MSH0173] (DestinationRule reviews.shop) The Subset v2 defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).',
      'Warning [MSH0174] (DestinationRule ghost.shop) The host ghost defined in the DestinationRule does not match any services in the mesh.',
      'Warning [MSH0174] (DestinationRule wild.shop) The host *.shop.svc.cluster.local defined in the DestinationRule does not match any services in the mesh.',
    ]);
  });

  test("a full host of another namespace's Service, subsets any pod matches (the node name as kubernetes.io/hostname), and no subsets stay quiet", () => {
    const pinned = pod('pinned', 'other', { labels: { version: 'v2' } });
    (pinned as { spec: object }).spec = { ...(pinned as { spec: object }).spec, nodeName: 'node-a' };
    const objects = [
      reviews,
      v1,
      pinned,
      destinationRule('remote', 'apps', {
        host: 'reviews.shop.svc.cluster.local',
        subsets: [...subsets, { name: 'a', labels: { 'kubernetes.io/hostname': 'node-a' } }],
      }),
      destinationRule('plain', 'shop', { host: 'reviews' }),
    ];
    expect(analyze(subsetSelectPodAnalyzer, objects)).toEqual([]);
  });
});
