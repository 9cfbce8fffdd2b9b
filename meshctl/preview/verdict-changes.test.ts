import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_MESH_CONFIG } from '../../crds/index.js';
import type { RecordedSightings } from '../../dataplane/decisions/index.js';
import type { KubeObject } from '../../runtime/index.js';
import { expectGoldenText } from '../../testing/golden.js';
import { PROJECT_ROOT } from '../../testing/run-bin.js';
import { loadEnvoyProtos } from '../../xds/envoy/index.js';
import { newOfflineMesh, type ProxyNodeFacts } from './offline-decisions.js';
import { renderPreview } from './render-preview.js';
import { compareVerdicts, describeSourceBy, newlyReadHeaders, type VerdictReport } from './verdict-changes.js';

// The preview's engine without a cluster: the daemon's generators over a small mesh, now and with
// a change, and recorded requests replayed through both; the requests whose verdict turns.
const ISSUER = 'issuer@secure.mesh.io';
const objects = (yaml: string): KubeObject[] => parseAllDocuments(yaml).map((document) => document.toJS() as KubeObject);
const MESH = objects(`
apiVersion: v1
kind: Service
metadata: { name: httpbin, namespace: foo }
spec: { clusterIP: 10.96.0.10, selector: { app: httpbin }, ports: [{ name: http, port: 8000, targetPort: 80 }] }
---
apiVersion: v1
kind: Pod
metadata: { name: httpbin-1, namespace: foo, labels: { app: httpbin }, annotations: { sidecar.mesh.io/status: injected } }
spec: { serviceAccountName: httpbin, containers: [{ name: httpbin, ports: [{ containerPort: 80 }] }] }
status: { podIP: 10.0.1.10, phase: Running }
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec: { jwtRules: [{ issuer: ${ISSUER}, jwks: '{"keys":[]}' }] }
`);
const NODE: ProxyNodeFacts = { id: 'sidecar~10.0.1.10~httpbin-1.foo~foo.svc.cluster.local', metadata: { NAMESPACE: 'foo', SERVICE_ACCOUNT: 'httpbin' } };
const SLEEP = 'spiffe://cluster.local/ns/bar/sa/sleep';
const AT = '2026-11-29T12:00:00.000Z';
const protos = loadEnvoyProtos();
const golden = (name: string): string => join(PROJECT_ROOT, 'meshctl', 'preview', 'testdata', name);

const entry = (path: string, source: 'mtls' | 'plaintext', count: number, extra: Partial<RecordedSightings> = {}): RecordedSightings => ({
  listener: 'virtualInbound',
  direction: 'inbound',
  connection: {
    destinationAddress: '10.0.1.10',
    destinationPort: 80,
    sourceAddress: source === 'mtls' ? '10.0.2.20' : '10.0.3.30',
    ...(source === 'mtls'
      ? {
          transportProtocol: 'tls',
          serverName: 'outbound_.8000_._.httpbin.foo.svc.cluster.local',
          applicationProtocols: ['mesh', 'http/1.1'],
          peerUriSans: [SLEEP],
        }
      : { transportProtocol: 'raw_buffer', applicationProtocols: ['http/1.1'] }),
  },
  request: { method: 'GET', host: 'httpbin.foo:8000', path, headers: {} },
  verdict: { outcome: 'forwarded' },
  count,
  firstSeen: AT,
  lastSeen: AT,
  ...extra,
});

const TRAFFIC: RecordedSightings[] = [
  entry('/headers', 'mtls', 3),
  entry('/ip', 'mtls', 5),
  entry('/headers', 'plaintext', 2),
  entry('/status/200', 'mtls', 1, {
    tokens: [{ header: 'authorization', prefix: 'Bearer ', claims: { iss: ISSUER, sub: 'alice', exp: Date.parse(AT) / 1000 + 3600 }, verified: true }],
  }),
];

async function preview(change: string): Promise<VerdictReport> {
  const changed = objects(change);
  const options = { meshConfig: DEFAULT_MESH_CONFIG, domain: 'cluster.local', clusterId: 'Kubernetes', protos };
  const current = newOfflineMesh(MESH, options).configFor(NODE);
  const replaced = new Set(changed.map((object) => `${object.kind}/${object.metadata?.namespace}/${object.metadata?.name}`));
  const rest = MESH.filter((object) => !replaced.has(`${object.kind}/${object.metadata?.namespace}/${object.metadata?.name}`));
  const proposed = newOfflineMesh([...rest, ...changed], options).configFor(NODE);
  return compareVerdicts(
    [
      {
        workload: 'httpbin-1.foo',
        entries: TRAFFIC,
        current: current.decisions,
        proposed: proposed.decisions,
        unreadHeaders: newlyReadHeaders(current.resources, proposed.resources),
      },
    ],
    describeSourceBy(new Map([['10.0.3.30', 'legacy-1.legacy']])),
  );
}

describe('x authz preview: recorded requests replayed now and with the change', () => {
  test('a DENY on /headers names exactly the /headers requests, from both callers', async () => {
    const report = await preview(`
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-headers, namespace: foo }
spec: { selector: { matchLabels: { app: httpbin } }, action: DENY, rules: [{ to: [{ operation: { paths: ["/headers"] } }] }] }`);
    expect(report.replayed).toEqual({ kinds: 4, calls: 11 });
    expect(report.changes.map((change) => [change.source, change.path, change.calls, change.to.policy])).toEqual([
      [SLEEP, '/headers', 3, 'ns[foo]-policy[deny-headers]-rule[0]'],
      ['plaintext 10.0.3.30 (legacy-1.legacy)', '/headers', 2, 'ns[foo]-policy[deny-headers]-rule[0]'],
    ]);
    expect(report.caveats).toEqual([]);
    expectGoldenText(golden('deny-headers.golden.txt'), renderPreview(report));
  });

  test('namespace STRICT names the plain-text caller it would cut off', async () => {
    const report = await preview(`
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: default, namespace: foo }
spec: { mtls: { mode: STRICT } }`);
    expect(report.changes).toEqual([
      expect.objectContaining({ source: 'plaintext 10.0.3.30 (legacy-1.legacy)', calls: 2, to: { outcome: 'reset', by: 'STRICT mutual TLS' } }),
    ]);
    expectGoldenText(golden('strict.golden.txt'), renderPreview(report));
  });

  test('a RequestAuthentication of another issuer refuses the recorded token; an ALLOW that matches all changes nothing', async () => {
    const issuer = await preview(`
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: jwt, namespace: foo }
spec: { jwtRules: [{ issuer: other@secure.mesh.io, jwks: '{"keys":[]}' }] }`);
    expect(issuer.changes.map((change) => [change.path, change.to])).toEqual([['/status/200', { outcome: 'respond', status: 401, by: 'jwt' }]]);
    const none = await preview(`
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: allow-all, namespace: foo }
spec: { action: ALLOW, rules: [{}] }`);
    expect(none.changes).toEqual([]);
    expect(renderPreview(none)).toBe('Replayed 4 kinds of recorded request (11 calls) at httpbin-1.foo.\nNo recorded request would change verdict.\n');
  });

  test('a change that reads a header the record did not keep says so', async () => {
    const report = await preview(`
apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: deny-eve, namespace: foo }
spec: { action: DENY, rules: [{ when: [{ key: "request.headers[x-user]", values: [eve] }] }] }`);
    expect(report.caveats).toEqual(['httpbin-1.foo: the change reads headers the record did not keep (x-user): requests are replayed without them']);
  });
});
