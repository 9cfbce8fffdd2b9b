import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AdmissionregistrationV1Api, ApiextensionsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';
import { BUILTIN_INJECTOR_CONFIG } from '../../webhook/inject/index.js';
import type { KubeletOptions } from './kubelet.js';
import { webhookConfigurationsYaml } from './webhook-configurations.js';

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
}

type SampleObject = { kind?: string; metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; spec?: { containers?: { name?: string; image?: string }[] }; status?: { podIP?: string } };

export async function startKubernetesOrchestrator(workDir: string, samples: string, projectRoot: string, daemon: DaemonAddresses): Promise<KubernetesOrchestrator> {
  const double = await startApiServerDouble({
    bookmarkIntervalMs: 0,
    serviceResolver: (namespace, name, port) => (namespace === 'mesh-system' && name === 'meshd' && port === 443 ? { host: '127.0.0.1', port: daemon.httpsPort } : undefined),
  });
  const kubeconfigPath = join(workDir, 'kubeconfig');
  await double.writeKubeconfig(kubeconfigPath);
  const kubeConfig = double.kubeConfig();
  const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
  for (const crd of buildCrdManifests()) await extensions.createCustomResourceDefinition({ body: crd as never });
  const kubectl = kubectlPath(projectRoot);
  const kubectlRun = async (args: readonly string[]): Promise<void> => {
    try {
      await run(kubectl, [...args], { env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', KUBECONFIG: kubeconfigPath } });
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
  const sampleFiles = readdirSync(samples).filter((file) => file.endsWith('.yaml')).sort();
  const documentsOf = (file: string): SampleObject[] => parseAllDocuments(readFileSync(join(samples, file), 'utf8')).map((d) => d.toJS() as SampleObject).filter((d) => d !== null);
  // Namespaces first, as one would apply a folder; the meshed ones ask for injection.
  const namespaces = sampleFiles.flatMap(documentsOf).filter((d) => d.kind === 'Namespace');
  for (const namespace of namespaces) {
    if (namespace.metadata?.labels?.['sidecar.mesh.io/inject'] === 'true') namespace.metadata.labels = { ...namespace.metadata.labels, 'mesh-injection': 'enabled' };
  }
  await applyText('namespaces.yaml', namespaces.map((d) => stringify(d)).join('---\n'));
  await applyText('mesh-config.yaml', meshConfigMapsYaml(daemon.securePort));
  await applyText('webhooks.yaml', webhookConfigurationsYaml());
  const kubelet: KubeletOptions = {
    kubeConfig,
    issueToken: (namespace, serviceAccount, audience, expirationSeconds) => double.issueToken({ namespace, serviceAccount, audiences: [audience], expirationSeconds }),
  };

  return {
    kubeconfigPath,
    double,
    kubelet,
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
        for (const document of documents) {
          if (document.kind !== 'Pod' || !document.status?.podIP) continue;
          pods.push({ name: document.metadata?.name ?? '', namespace: document.metadata?.namespace ?? 'default', podIp: document.status.podIP });
          asAppliedBeforeInjection(document, appAddressOf(document.status.podIP));
        }
        await applyText(file, documents.map((d) => stringify(d)).join('---\n'));
      }
      // The kubelet's part: addresses and readiness.
      const stored: V1Pod[] = [];
      for (const { name, namespace, podIp } of pods) {
        const current = await core.readNamespacedPod({ name, namespace });
        stored.push(
          await core.replaceNamespacedPodStatus({
            name,
            namespace,
            body: { ...current, status: { phase: 'Running', podIP: podIp, podIPs: [{ ip: podIp }], hostIP: '127.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } },
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
 * the marks of injection come off; the app's private address goes in as proxy metadata; the
 * ingress gateway asks for the gateway template by the object webhook, as a gateway Deployment does.
 */
function asAppliedBeforeInjection(pod: SampleObject, appAddress: string): void {
  const metadata = (pod.metadata ??= {});
  const labels = { ...(metadata.labels ?? {}) };
  const annotations = { ...(metadata.annotations ?? {}) };
  delete labels['security.mesh.io/tlsMode'];
  const meshed = annotations['sidecar.mesh.io/status'] !== undefined;
  delete annotations['sidecar.mesh.io/status'];
  if (labels['mesh'] === 'ingressgateway') {
    labels['sidecar.mesh.io/inject'] = 'true';
    annotations['inject.mesh.io/templates'] = 'gateway';
    const proxy = pod.spec?.containers?.[0];
    if (proxy) Object.assign(proxy, { name: 'mesh-proxy', image: 'auto' });
  } else if (meshed) {
    annotations['proxy.mesh.io/config'] = JSON.stringify({ proxyMetadata: { APP_ADDRESS: appAddress } });
  }
  metadata.labels = labels;
  metadata.annotations = annotations;
  delete pod.status;
}

/** The mesh config and the injector's values as the operator of this "cluster" sets them: the daemon's loopback address. */
function meshConfigMapsYaml(securePort: number): string {
  const mesh = `defaultConfig:\n  discoveryAddress: 127.0.0.1:${securePort}\n  proxyMetadata:\n    ECC_SIGNATURE_ALGORITHM: ECDSA\n`;
  const values = JSON.parse(BUILTIN_INJECTOR_CONFIG.values) as { global: Record<string, unknown> };
  values.global['caAddress'] = `127.0.0.1:${securePort}`;
  return [
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: 'mesh-system' }, data: { mesh } },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'mesh-sidecar-injector', namespace: 'mesh-system', labels: { 'mesh.io/rev': 'default' } },
      data: { config: BUILTIN_INJECTOR_CONFIG.config, values: JSON.stringify(values) },
    },
  ]
    .map((o) => stringify(o))
    .join('---\n');
}
