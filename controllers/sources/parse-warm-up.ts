/**
 * What a parse thread does between its start and its first job: it parses and checks a few
 * policies of every kind, so that its first real batch runs on compiled code: a cold thread spends
 * more CPU on its first batch, and V8's compiler threads as much again compiling for it (figures
 * in bench/README.md, config loading). Done in slices, so a job that arrives stops it at once.
 */
import { checkConfigFile } from './config-file-checker.js';
import { toTransfer } from './json-transfer.js';

export const WARM_UP_SAMPLE = `apiVersion: security.mesh.io/v1beta1
kind: AuthorizationPolicy
metadata:
  name: warm-up
  namespace: warm-up
  labels: { app: warm-up }
spec:
  selector:
    matchLabels:
      app: warm-up
  action: ALLOW
  rules:
    - from:
        - source:
            principals: ["cluster.local/ns/warm-up/sa/client"]
            namespaces: [warm-up]
      to:
        - operation:
            methods: ["GET", "POST"]
            paths: ["/api/*"]
            ports: ["8080"]
      when:
        - key: request.headers[x-tenant]
          values: ["tenant"]
---
apiVersion: security.mesh.io/v1beta1
kind: PeerAuthentication
metadata:
  name: warm-up
  namespace: warm-up
spec:
  selector:
    matchLabels:
      app: warm-up
  mtls:
    mode: STRICT
  portLevelMtls:
    "8080":
      mode: PERMISSIVE
---
apiVersion: security.mesh.io/v1beta1
kind: RequestAuthentication
metadata: { name: warm-up-jwt, namespace: warm-up }
spec:
  selector: { matchLabels: { app: warm-up, version: v1 } }
  jwtRules:
    - issuer: https://issuer.example.com
      jwksUri: https://issuer.example.com/jwks.json
      audiences: ["api"]
      forwardOriginalToken: true
---
apiVersion: networking.mesh.io/v1alpha3
kind: DestinationRule
metadata:
  name: warm-up
  namespace: warm-up
spec:
  host: warm-up.warm-up.svc.cluster.local
  trafficPolicy:
    tls:
      mode: MESH_MUTUAL
    connectionPool:
      tcp:
        maxConnections: 100
  subsets:
    - name: v1
      labels:
        version: v1
---
apiVersion: networking.mesh.io/v1alpha3
kind: VirtualService
metadata:
  name: warm-up
  namespace: warm-up
spec:
  hosts: [warm-up.warm-up.svc.cluster.local]
  http:
    - match:
        - uri:
            prefix: /api
      route:
        - destination:
            host: warm-up.warm-up.svc.cluster.local
            subset: v1
          weight: 100
      timeout: 5s
---
apiVersion: networking.mesh.io/v1alpha3
kind: Gateway
metadata:
  name: warm-up
  namespace: warm-up
spec:
  selector:
    app: ingress
  servers:
    - port: { number: 80, name: http, protocol: HTTP }
      hosts: ["*"]
---
apiVersion: networking.mesh.io/v1alpha3
kind: ServiceEntry
metadata:
  name: warm-up
  namespace: default
spec:
  hosts: [api.example.com]
  addresses: [192.0.2.10]
  location: MESH_EXTERNAL
  resolution: STATIC
  ports:
    - {number: 443, name: tls, protocol: TLS}
  endpoints:
    - {address: 10.0.0.1, ports: {tls: 8443}, labels: {app: api}}
---
apiVersion: networking.mesh.io/v1alpha3
kind: WorkloadEntry
metadata:
  name: warm-up
  namespace: default
spec:
  address: 10.0.0.2
  labels: {app: vm}
  serviceAccount: vm
---
apiVersion: networking.mesh.io/v1alpha3
kind: WorkloadGroup
metadata:
  name: warm-up
  namespace: default
spec:
  template: {serviceAccount: vm}
  probe: {periodSeconds: 5, httpGet: {path: /ready, port: 8080}}
`;

/**
 * Passes over the sample (nine documents each), at most: about 900 documents, 300–400 ms of CPU. A
 * job usually stops it before (the daemon starts its caches 300–400 ms after its config source).
 */
const DEFAULT_ROUNDS = 100;

/**
 * Runs the warm-up, one pass per turn of the event loop, until `rounds` passes are done or
 * `isBusy()` says a job came. `clusterScoped` as the real jobs use it. Every document of the
 * sample is valid (a test checks it).
 */
export function warmUpParsing(options: { isBusy: () => boolean; clusterScoped?: ReadonlySet<string>; rounds?: number }): Promise<void> {
  const rounds = options.rounds ?? DEFAULT_ROUNDS;
  return new Promise((resolve) => {
    let done = 0;
    const pass = (): void => {
      if (options.isBusy() || done >= rounds) {
        resolve();
        return;
      }
      toTransfer(checkConfigFile(`warm-up-${done}.yaml`, WARM_UP_SAMPLE, options.clusterScoped));
      done++;
      setImmediate(pass);
    };
    setImmediate(pass);
  });
}
