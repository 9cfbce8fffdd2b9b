import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { newRealClock, type Clock, type KubeObject } from '../runtime/index.js';
import { AccessRules } from './access-rules.js';
import { AdmissionChain } from './admission/index.js';
import type { WebhookServiceResolver } from './admission/index.js';
import { builtinResourceTypes } from './builtin-resources.js';
import { versionInfo } from './discovery.js';
import { FaultState } from './faults.js';
import type { FaultControls } from './faults.js';
import { newRequestHandler } from './http-handler.js';
import { kubeconfigYaml, newKubeConfig } from './kubeconfig.js';
import { ObjectStore } from './object-store.js';
import type { PodLogSource } from './pod-log.js';
import { PortForwardServer } from './pod-portforward.js';
import { newUpgradeHandler } from './pod-subresources.js';
import { PodTargets } from './pod-target.js';
import type { PodResolver } from './pod-target.js';
import type { ApiRequestRecorder } from './request-log.js';
import { ResourceRegistry, storageKey } from './resource-registry.js';
import { parseApiVersion } from './resource-type.js';
import { ResourceService } from './resource-service.js';
import { TokenAuthority } from './token-authority.js';
import { WatchHub } from './watch-hub.js';

export type { FaultControls } from './faults.js';
export type { AccessDenial } from './access-rules.js';
export type { WebhookServiceResolver } from './admission/index.js';
export type { ApiRequestRecord, ApiRequestRecorder } from './request-log.js';
export type { PodLogLine, PodLogSource } from './pod-log.js';
export type { PodAddress, PodResolver } from './pod-target.js';

export interface IssueTokenOptions {
  namespace: string;
  serviceAccount: string;
  audiences?: string[];
  expirationSeconds?: number;
  podName?: string;
}

export interface ApiServerDouble {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** A client-node KubeConfig for this server (cluster, user, context); a fresh one per call. */
  kubeConfig(): KubeConfig;
  /** The same as YAML, for `kubectl --kubeconfig`; with `token`, requests carry that bearer token (e.g. one of `issueToken`). */
  kubeconfigYaml(token?: string): string;
  writeKubeconfig(path: string, token?: string): Promise<void>;
  /** A signed service account token that this server's TokenReview accepts. */
  issueToken(opts: IssueTokenOptions): string;
  faults: FaultControls;
  close(): Promise<void>;
  /** The stored objects of a kind (optionally of one namespace), bypassing HTTP. */
  objects(apiVersion: string, kind: string, namespace?: string): KubeObject[];
}

export interface ApiServerDoubleOptions {
  host?: string;
  port?: number;
  /** How many writes the watch history keeps (default 10000); older resource versions get 410. */
  historyLimit?: number;
  /** Period of BOOKMARK events on watches that allow them (default 1000 ms; 0 turns them off). */
  bookmarkIntervalMs?: number;
  /** Drives timestamps, token lifetimes, bookmarks, watch timeouts and injected delays. */
  clock?: Clock;
  /**
   * Where admission webhooks given as `clientConfig.service` are dialled (TLS server name
   * `<name>.<namespace>.svc`); without it, or when it answers `undefined`, such calls fail.
   */
  serviceResolver?: WebhookServiceResolver;
  /** Told of every resource request: its RBAC verb, group, resource and requester. */
  onRequest?: ApiRequestRecorder;
  /** The Kubernetes version `GET /version` answers (default `1.35.0`). */
  kubernetesVersion?: string;
  /**
   * Where pods/portforward and pods/proxy dial a pod's port; without it, or when it answers
   * `undefined`, the pod's `status.podIP` with the same port.
   */
  podResolver?: PodResolver;
  /** What pods/log serves (the double has no kubelet); without it every log is empty. */
  podLogs?: PodLogSource;
}

const ADMIN_TOKEN = 'mesh-double-admin-token';

export async function startApiServerDouble(options: ApiServerDoubleOptions = {}): Promise<ApiServerDouble> {
  const clock = options.clock ?? newRealClock();
  const store = new ObjectStore(options.historyLimit ?? 10_000);
  const registry = new ResourceRegistry(builtinResourceTypes());
  const service = new ResourceService(store, registry, clock);
  service.bootstrap();
  const tokens = await TokenAuthority.create(clock);
  const watches = new WatchHub(service, clock, options.bookmarkIntervalMs ?? 1000);
  const faultState = new FaultState();
  const access = new AccessRules();
  const admission = new AdmissionChain(
    {
      webhookConfigurations: (phase) => store.list(`admissionregistration.k8s.io/${phase}webhookconfigurations`),
      namespace: (name) => store.get('/namespaces', '', name),
    },
    options.serviceResolver,
  );
  const host = options.host ?? '127.0.0.1';
  let address = '';
  const pods = new PodTargets(store, options.podResolver);

  const server = createServer(
    newRequestHandler({
      service,
      watches,
      tokens,
      faults: faultState,
      clock,
      admission,
      access,
      version: versionInfo(options.kubernetesVersion ?? '1.35.0'),
      serverAddress: () => address,
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
      pods: { pods, clock, source: options.podLogs, followIntervalMs: 100 },
    }),
  );
  server.on(
    'upgrade',
    newUpgradeHandler({
      registry,
      faults: faultState,
      portForward: new PortForwardServer(pods),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    }),
  );
  server.on('connection', (socket) => {
    if (faultState.refusing) {
      // A reset rather than a plain close: undici's fetch on Node 20 never settles when the
      // socket closes before it has written anything.
      socket.resetAndDestroy();
      return;
    }
    faultState.sockets.add(socket);
    socket.on('close', () => faultState.sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  address = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const url = `http://${address}`;

  const faults: FaultControls = {
    dropWatches: () => watches.dropAll(),
    compactHistory: () => store.compact(),
    refuseConnections: (on) => {
      faultState.refusing = on;
      if (on) {
        watches.dropAll();
        faultState.cutAll();
      }
    },
    delayMs: (ms) => {
      faultState.delay = Math.max(0, ms);
    },
    failNext: (count, status) => faultState.failNext(count, status),
    pendingFailures: () => faultState.pending(),
    denyAccess: (denials) => access.set(denials),
  };

  let closed: Promise<void> | undefined;
  return {
    url,
    kubeConfig: () => newKubeConfig(url, ADMIN_TOKEN),
    kubeconfigYaml: (token) => kubeconfigYaml(url, token ?? ADMIN_TOKEN),
    writeKubeconfig: (path, token) => writeFile(path, kubeconfigYaml(url, token ?? ADMIN_TOKEN), { mode: 0o600 }),
    issueToken: (opts) => {
      const uid = store.get('/serviceaccounts', opts.namespace, opts.serviceAccount)?.metadata?.uid;
      return tokens.issue({ ...opts, ...(uid ? { serviceAccountUid: uid } : {}) });
    },
    faults,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        watches.endAll();
        server.close(() => resolve());
        server.closeAllConnections();
        faultState.cutAll();
      });
      return closed;
    },
    objects: (apiVersion, kind, namespace) => {
      const { group, version } = parseApiVersion(apiVersion);
      const type = registry.byKind(group, kind);
      if (!type) return [];
      return store.list(storageKey(type), namespace).map((o) => service.present(o, type, version));
    },
  };
}
