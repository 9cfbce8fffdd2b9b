/**
 * The soak's churn: a cycle of config changes (policies, routing, services, endpoints) applied one
 * step at a time through the local mesh (files of its config folder). One step applies a DENY
 * policy on bar's httpbin for callers from foo and a later step removes it: between the two
 * (plus a grace for the removal to reach the data plane) a 403 on a foo → bar request is expected.
 */

/** Where the mesh's config is written: the local mesh's `apply` and `remove`. */
export interface ConfigSink {
  apply(name: string, yaml: string): Promise<void>;
  remove(name: string): Promise<void>;
}

/** The time span in which requests of matching pairs may be denied; `endAt` unset while the policy is on. */
export interface DenyWindow {
  readonly policy: string;
  readonly fromNamespace: string;
  readonly toNamespace: string;
  readonly startAt: number;
  endAt?: number;
}

export interface ChurnStep {
  readonly name: string;
  readonly deny?: 'start' | 'end';
  run(sink: ConfigSink, round: number): Promise<void>;
}

const ALLOW_FOO = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: soak-allow, namespace: foo }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: ALLOW
  rules:
    - from: [{ source: { principals: ["cluster.local/ns/foo/sa/sleep", "cluster.local/ns/bar/sa/sleep"] } }]
`;

const DENY_FOO_TO_BAR = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata: { name: soak-deny, namespace: bar }
spec:
  selector: { matchLabels: { app: httpbin } }
  action: DENY
  rules:
    - from: [{ source: { namespaces: ["foo"] } }]
`;

const peerAuthentication = (mode: 'STRICT' | 'PERMISSIVE'): string => `apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata: { name: soak-peer, namespace: foo }
spec:
  mtls: { mode: ${mode} }
`;

const DESTINATION_RULE = `apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata: { name: soak-httpbin, namespace: bar }
spec:
  host: httpbin.bar.svc.cluster.local
  trafficPolicy:
    tls: { mode: MESH_MUTUAL }
    connectionPool: { http: { maxRequestsPerConnection: 100 } }
  subsets:
    - name: v1
      labels: { version: v1 }
`;

const virtualService = (round: number): string => `apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata: { name: soak-httpbin, namespace: bar }
spec:
  hosts: [httpbin.bar.svc.cluster.local]
  http:
    - route:
        - destination: { host: httpbin.bar.svc.cluster.local, subset: v1 }
      headers: { request: { set: { x-soak-round: "${round}" } } }
      timeout: 10s
`;

/** Services nobody calls, each selecting pods that exist only as endpoints. */
function churnServices(round: number, services: number, podsEach: number): string {
  const documents: string[] = [];
  for (let s = 0; s < services; s++) {
    documents.push(`apiVersion: v1
kind: Service
metadata: { name: churn-${s}, namespace: bar }
spec:
  selector: { app: churn-${s} }
  ports: [{ name: http, port: 9000, targetPort: 9000, protocol: TCP }]
`);
    for (let p = 0; p < podsEach; p++) {
      documents.push(`apiVersion: v1
kind: Pod
metadata: { name: churn-${s}-${round}-${p}, namespace: bar, labels: { app: churn-${s} } }
spec: { containers: [{ name: app, ports: [{ containerPort: 9000 }] }] }
status: { podIP: 10.77.${(round % 200) + s}.${p + 1} }
`);
    }
  }
  return documents.join('---\n');
}

/** The steps of one cycle, in order; the DENY policy's removal comes `denySteps` steps after it is applied. */
export function churnCycle(): ChurnStep[] {
  return [
    { name: 'services: add 3 with 2 endpoints each', run: (sink, round) => sink.apply('soak-churn.yaml', churnServices(round, 3, 2)) },
    { name: 'AuthorizationPolicy ALLOW on foo/httpbin (both sleeps)', run: (sink) => sink.apply('soak-allow.yaml', ALLOW_FOO) },
    { name: 'PeerAuthentication STRICT in foo', run: (sink) => sink.apply('soak-peer.yaml', peerAuthentication('STRICT')) },
    { name: 'DestinationRule bar/httpbin (subset v1, MESH_MUTUAL)', run: (sink) => sink.apply('soak-dr.yaml', DESTINATION_RULE) },
    { name: 'VirtualService bar/httpbin → v1', run: (sink, round) => sink.apply('soak-vs.yaml', virtualService(round)) },
    { name: 'endpoints: 4 per service, new addresses', run: (sink, round) => sink.apply('soak-churn.yaml', churnServices(round + 1, 3, 4)) },
    { name: 'AuthorizationPolicy DENY foo → bar/httpbin', deny: 'start', run: (sink) => sink.apply('soak-deny.yaml', DENY_FOO_TO_BAR) },
    { name: 'PeerAuthentication PERMISSIVE in foo', run: (sink) => sink.apply('soak-peer.yaml', peerAuthentication('PERMISSIVE')) },
    { name: 'DENY removed', deny: 'end', run: (sink) => sink.remove('soak-deny.yaml') },
    { name: 'VirtualService removed', run: (sink) => sink.remove('soak-vs.yaml') },
    { name: 'DestinationRule removed', run: (sink) => sink.remove('soak-dr.yaml') },
    { name: 'endpoints: 1 per service', run: (sink, round) => sink.apply('soak-churn.yaml', churnServices(round + 2, 3, 1)) },
    { name: 'PeerAuthentication removed', run: (sink) => sink.remove('soak-peer.yaml') },
    { name: 'ALLOW removed', run: (sink) => sink.remove('soak-allow.yaml') },
    { name: 'services removed', run: (sink) => sink.remove('soak-churn.yaml') },
  ];
}

/** Every file a cycle may leave behind. */
export const CHURN_FILES = ['soak-churn.yaml', 'soak-allow.yaml', 'soak-peer.yaml', 'soak-dr.yaml', 'soak-vs.yaml', 'soak-deny.yaml'] as const;

export const DENY_FROM = 'foo';
export const DENY_TO = 'bar';
