import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  type V1Container,
  type V1ContainerStatus,
  type V1Pod,
  type V1PodStatus,
} from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { startApiServerDouble, type ApiServerDouble, type PodLogSource } from '../../apiserver-double/index.js';
import { prepareContainer, type ContainerLaunch, type KubeletOptions } from './kubelet.js';
import { ANNOTATIONS, LABELS } from '../../names/index.js';
import { processEnvironment } from '../../runtime/index.js';

const run = promisify(execFile);

/**
 * The local mesh's Kubernetes mode: the API server double holds the samples, applied with the
 * real `kubectl` like every policy after them. The namespaces, the mesh and injector ConfigMaps
 * and the webhook configurations come first; once the daemon serves its webhooks, the sample
 * workloads are applied un-injected and stored injected, and their addresses set through the
 * status subresource, as the kubelet would set them.
 */
export interface KubernetesOrchestrator {
  readonly kubeconfigPath: string;
  readonly double: ApiServerDouble;
  /** What the local kubelet needs to start a pod's proxy container. */
  readonly kubelet: KubeletOptions;
  /**
   * The daemon as the meshd chart's Deployment runs it: its container's command line and env for
   * a pod of that Deployment, the volumes filled under `podDir`, and KUBECONFIG standing in for the
   * in-cluster API server address.
   */
  daemonLaunch(podDir: string): Promise<ContainerLaunch>;
  /** Waits until the daemon has put its trust bundle into the injection webhooks. */
  waitForWebhooks(timeoutMs: number): Promise<void>;
  /** Applies the sample workloads (pods un-injected), sets their addresses; returns the pods as stored. */
  applyWorkloads(appAddressOf: (podIp: string) => string): Promise<V1Pod[]>;
  /** `kubectl apply -f` of a file holding `yaml`. */
  apply(name: string, yaml: string): Promise<void>;
  /** `kubectl delete -f` of what `apply` applied under that name. */
  remove(name: string): Promise<void>;
  /** A projected service-account token the CA accepts (audience `mesh-ca`). */
  token(namespace: string, serviceAccount: string): string;
  /** The root the daemon publishes in every namespace (`mesh-ca-root-cert`). */
  root(namespace: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

export function kubectlPath(projectRoot: string): string {
  const local = join(projectRoot, '.tools/bin/kubectl');
  return existsSync(local) ? local : 'kubectl';
}

/** Where the daemon is reached from the local pods: its ports on the loopback address. */
export interface DaemonAddresses {
  /** `--httpsAddr`: the admission webhooks (the double calls the `meshd` service there). */
  readonly httpsPort: number;
  /** `--secureGRPCAddr`: xDS and the CA. */
  readonly securePort: number;
  /** PILOT_DEBOUNCE_AFTER, given to the chart as the daemon's extra env. */
  readonly debounce: string;
  /** Further env of the daemon, given to the chart too. */
  readonly env?: Readonly<Record<string, string>>;
  /** Further proxy config of every proxy: the mesh config's `defaultConfig`, given to the chart too. */
  readonly proxyConfig?: Readonly<Record<string, unknown>>;
  /** The other listeners, reached through the daemon pod's ports (port-forwards, the pod proxy). */
  readonly grpcPort?: number;
  readonly httpPort?: number;
  readonly monitoringPort?: number;
}

/** The daemon's pod as the local mesh registers it (its process runs on 127.0.0.1). */
export const DAEMON_POD = 'meshd-local';

/** A port of the daemon's pod (the chart's container ports) to where its process listens here. */
function daemonPort(daemon: DaemonAddresses, port: number): number | undefined {
  const ports: Record<number, number | undefined> = {
    15010: daemon.grpcPort,
    15012: daemon.securePort,
    8080: daemon.httpPort,
    15014: daemon.monitoringPort,
    15017: daemon.httpsPort,
  };
  return ports[port];
}

export function helmPath(projectRoot: string): string {
  const local = join(projectRoot, '.tools/bin/helm');
  return existsSync(local) ? local : 'helm';
}

type SampleObject = {
  kind?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { containers?: { name?: string; image?: string }[] };
  status?: { podIP?: string };
};

/** Where a pod's port is served on this machine (the double's port-forwards and pod proxy go there). */
export type PodPortResolver = (namespace: string, pod: string, port: number) => { host: string; port: number } | undefined;

export async function startKubernetesOrchestrator(
  workDir: string,
  samples: string,
  projectRoot: string,
  daemon: DaemonAddresses,
  podLogs?: PodLogSource,
  extraPods?: PodPortResolver,
): Promise<KubernetesOrchestrator> {
  const double = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    ...(podLogs ? { podLogs } : {}),
    serviceResolver: (namespace, name, port) =>
      namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: daemon.httpsPort } : undefined,
    podResolver: (namespace, pod, port) => {
      if (namespace !== 'mesh-system' || pod !== DAEMON_POD) return extraPods?.(namespace, pod, port);
      const local = daemonPort(daemon, port);
      return local === undefined ? undefined : { host: '127.0.0.1', port: local };
    },
  });
  const kubeconfigPath = join(workDir, 'kubeconfig');
  await double.writeKubeconfig(kubeconfigPath);
  const kubeConfig = double.kubeConfig();
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
  const kubectl = kubectlPath(projectRoot);
  const kubectlRun = async (args: readonly string[]): Promise<void> => {
    try {
      await run(kubectl, [...args], {
        env: { PATH: processEnvironment()['PATH'] ?? '', HOME: processEnvironment()['HOME'] ?? '', KUBECONFIG: kubeconfigPath },
      });
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')}: ${failed.stderr ?? failed.message}`, { cause: error });
    }
  };
  const files = join(workDir, 'applied');
  mkdirSync(files, { recursive: true });
  const applyText = async (name: string, yaml: string): Promise<void> => {
    writeFileSync(join(files, name), yaml);
    await kubectlRun(['apply', '-f', join(files, name)]);
  };
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const sampleFiles = readdirSync(samples)
    .filter((file) => file.endsWith('.yaml'))
    .sort();
  const documentsOf = (file: string): SampleObject[] =>
    parseAllDocuments(readFileSync(join(samples, file), 'utf8'))
      .map((d) => d.toJS() as SampleObject)
      .filter((d) => d !== null);
  // Namespaces first, as one would apply a folder; the meshed ones ask for injection.
  const namespaces = sampleFiles.flatMap(documentsOf).filter((d) => d.kind === 'Namespace');
  for (const namespace of namespaces) {
    if (namespace.metadata?.labels?.[LABELS.inject] === 'true')
      namespace.metadata.labels = { ...namespace.metadata.labels, [LABELS.namespaceInjection]: 'enabled' };
  }
  await applyText('namespaces.yaml', namespaces.map((d) => stringify(d)).join('---\n'));
  // The control plane and the gateway as a user installs them: the charts, with helm.
  const helm = async (args: readonly string[]): Promise<void> => {
    try {
      await run(helmPath(projectRoot), [...args], {
        env: {
          PATH: processEnvironment()['PATH'] ?? '',
          HOME: workDir,
          HELM_CACHE_HOME: join(workDir, '.helm'),
          HELM_CONFIG_HOME: join(workDir, '.helm'),
          HELM_DATA_HOME: join(workDir, '.helm'),
          KUBECONFIG: kubeconfigPath,
        },
      });
    } catch (error) {
      const failed = error as { stderr?: string; message: string };
      throw new Error(`helm ${args.join(' ')}: ${failed.stderr ?? failed.message}`, { cause: error });
    }
  };
  const values = (name: string, yaml: string): string => {
    writeFileSync(join(files, name), yaml);
    return join(files, name);
  };
  await helm([
    'install',
    'meshd',
    join(projectRoot, 'deploy/charts/meshd'),
    '--namespace',
    'mesh-system',
    '-f',
    values('meshd-values.yaml', meshdValuesYaml(daemon)),
  ]);
  await helm([
    'install',
    'mesh-ingressgateway',
    join(projectRoot, 'deploy/charts/gateway'),
    '--namespace',
    'mesh-system',
    '-f',
    values('gateway-values.yaml', GATEWAY_VALUES),
  ]);
  const kubelet: KubeletOptions = {
    kubeConfig,
    issueToken: (namespace, serviceAccount, audience, expirationSeconds) =>
      double.issueToken({ namespace, serviceAccount, audiences: [audience], expirationSeconds }),
  };

  const apps = kubeConfig.makeApiClient(AppsV1Api);
  /** A pod of a Deployment, as its ReplicaSet would create it (named as the samples name it). */
  const podOfDeployment = async (deploymentName: string, podName: string): Promise<V1Pod> => {
    const template = (await apps.readNamespacedDeployment({ name: deploymentName, namespace: 'mesh-system' })).spec?.template;
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { ...template?.metadata, name: podName, namespace: 'mesh-system' },
      spec: template?.spec ?? { containers: [] },
    };
  };

  return {
    kubeconfigPath,
    double,
    kubelet,
    async daemonLaunch(podDir) {
      // The daemon's pod, as its ReplicaSet and the kubelet would leave it: `meshctl` finds it by its labels.
      const created = await core.createNamespacedPod({ namespace: 'mesh-system', body: await podOfDeployment('meshd', DAEMON_POD) });
      await core.replaceNamespacedPodStatus({ name: DAEMON_POD, namespace: 'mesh-system', body: { ...created, status: runningStatus(created, '127.0.0.1') } });
      const pod = { ...(await podOfDeployment('meshd', DAEMON_POD)), status: { podIP: '127.0.0.1', hostIP: '127.0.0.1' } };
      const launch = await prepareContainer(pod, 'discovery', podDir, kubelet);
      if (!launch) throw new Error('the meshd chart has no discovery container');
      const inCluster = join(podDir, 'in-cluster-kubeconfig');
      writeFileSync(inCluster, double.kubeconfigYaml());
      return { ...launch, env: { ...launch.env, KUBECONFIG: inCluster } };
    },
    async waitForWebhooks(timeoutMs) {
      const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hooks = await admission.readMutatingWebhookConfiguration({ name: 'mesh-sidecar-injector' });
        if ((hooks.webhooks ?? []).every((hook) => (hook.clientConfig.caBundle ?? '') !== '')) return;
        if (Date.now() > deadline) throw new Error(`the daemon did not patch the injection webhooks' caBundle within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async applyWorkloads(appAddressOf) {
      const pods: { name: string; namespace: string; podIp: string }[] = [];
      for (const file of sampleFiles) {
        const documents = documentsOf(file).filter((d) => d.kind !== 'Namespace');
        if (documents.length === 0) continue;
        const applied: SampleObject[] = [];
        for (const document of documents) {
          if (document.kind === 'Pod' && document.status?.podIP) {
            pods.push({ name: document.metadata?.name ?? '', namespace: document.metadata?.namespace ?? 'default', podIp: document.status.podIP });
            if (document.metadata?.labels?.['mesh'] === 'ingressgateway') {
              // The gateway chart's Deployment stands in for the sample's gateway pod.
              applied.push((await podOfDeployment('mesh-ingressgateway', document.metadata.name ?? '')) as SampleObject);
              continue;
            }
            asAppliedBeforeInjection(document, appAddressOf(document.status.podIP));
          }
          applied.push(document);
        }
        await applyText(file, applied.map((d) => stringify(d)).join('---\n'));
      }
      // The kubelet's part: addresses and readiness.
      const stored: V1Pod[] = [];
      for (const { name, namespace, podIp } of pods) {
        const current = await core.readNamespacedPod({ name, namespace });
        stored.push(
          await core.replaceNamespacedPodStatus({
            name,
            namespace,
            body: { ...current, status: runningStatus(current, podIp) },
          }),
        );
      }
      return stored;
    },
    apply: applyText,
    async remove(name) {
      if (existsSync(join(files, name))) await kubectlRun(['delete', '--ignore-not-found', '-f', join(files, name)]);
    },
    token: (namespace, serviceAccount) => double.issueToken({ namespace, serviceAccount, audiences: ['mesh-ca'], expirationSeconds: 24 * 3600 }),
    async root(namespace, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = await core.readNamespacedConfigMap({ namespace, name: 'mesh-ca-root-cert' }).catch(() => undefined);
        const root = found?.data?.['root-cert.pem'];
        if (root) return root;
        if (Date.now() > deadline) throw new Error(`no mesh-ca-root-cert in ${namespace} after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => double.close(),
  };
}

/**
 * A sample pod as a user applies it: the samples are written injected for config-folder mode, so
 * the marks of injection come off; the app's private address goes in as proxy metadata.
 */
function asAppliedBeforeInjection(pod: SampleObject, appAddress: string): void {
  const metadata = (pod.metadata ??= {});
  const labels = { ...(metadata.labels ?? {}) };
  const annotations = { ...(metadata.annotations ?? {}) };
  delete labels[LABELS.tlsMode];
  const meshed = annotations[ANNOTATIONS.status] !== undefined;
  delete annotations[ANNOTATIONS.status];
  if (meshed) {
    annotations[ANNOTATIONS.proxyConfig] = JSON.stringify({ proxyMetadata: { MESH_META_APP_ADDRESS: appAddress } });
  }
  metadata.labels = labels;
  metadata.annotations = annotations;
  delete pod.status;
}

/**
 * The meshd chart's values as the operator of this "cluster" sets them: proxies reach the daemon
 * on its loopback address, sign with ECDSA keys, and the daemon debounces as the local mesh asks.
 */
function meshdValuesYaml(daemon: DaemonAddresses): string {
  return stringify({
    pilot: { autoscaleEnabled: false, env: { PILOT_DEBOUNCE_AFTER: daemon.debounce, ...daemon.env } },
    meshConfig: {
      defaultConfig: { ...daemon.proxyConfig, discoveryAddress: `127.0.0.1:${daemon.securePort}`, proxyMetadata: { ECC_SIGNATURE_ALGORITHM: 'ECDSA' } },
    },
    global: { caAddress: `127.0.0.1:${daemon.securePort}` },
  });
}

/** The gateway chart's values for the samples' ingress gateway (its service account and port 8080). */
const GATEWAY_VALUES = stringify({
  labels: { mesh: 'ingressgateway' },
  autoscaling: { enabled: false },
  serviceAccount: { name: 'mesh-ingressgateway-service-account' },
  service: { type: 'ClusterIP', ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' }] },
});

/** A pod's status as the kubelet leaves it once every container runs: init containers done, the others ready. */
function runningStatus(pod: V1Pod, podIp: string): V1PodStatus {
  const startedAt = new Date();
  const ready = (container: V1Container): V1ContainerStatus => ({
    name: container.name,
    image: container.image ?? '',
    imageID: '',
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt } },
  });
  const initContainers = pod.spec?.initContainers ?? [];
  return {
    phase: 'Running',
    podIP: podIp,
    podIPs: [{ ip: podIp }],
    hostIP: '127.0.0.1',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
    ],
    ...(initContainers.length > 0
      ? {
          initContainerStatuses: initContainers.map((container) =>
            container.restartPolicy === 'Always'
              ? ready(container)
              : {
                  name: container.name,
                  image: container.image ?? '',
                  imageID: '',
                  ready: true,
                  restartCount: 0,
                  state: { terminated: { exitCode: 0, reason: 'Completed', startedAt, finishedAt: startedAt } },
                },
          ),
        }
      : {}),
    containerStatuses: (pod.spec?.containers ?? []).map(ready),
  };
}
