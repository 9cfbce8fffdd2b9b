import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ApiextensionsV1Api, CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { buildCrdManifests } from '../../crds/crd-manifests.js';
import { startApiServerDouble, type ApiServerDouble } from '../../apiserver-double/index.js';

const run = promisify(execFile);

/**
 * The local mesh's Kubernetes mode: the API server double holds the samples, applied with the
 * real `kubectl` like every policy after them; pods get their addresses through the status
 * subresource, as the kubelet would set them.
 */
export interface KubernetesOrchestrator {
  readonly kubeconfigPath: string;
  readonly double: ApiServerDouble;
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

export async function startKubernetesOrchestrator(workDir: string, samples: string, projectRoot: string): Promise<KubernetesOrchestrator> {
  const double = await startApiServerDouble({ bookmarkIntervalMs: 0 });
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
  const core = kubeConfig.makeApiClient(CoreV1Api);
  // Namespaces first, then everything else, as one would apply a folder.
  const sampleFiles = readdirSync(samples).filter((file) => file.endsWith('.yaml')).sort((a, b) => Number(b.startsWith('namespaces')) - Number(a.startsWith('namespaces')));
  for (const file of sampleFiles) await kubectlRun(['apply', '-f', join(samples, file)]);
  // The kubelet's part: addresses and readiness.
  for (const file of sampleFiles) {
    for (const document of parseAllDocuments(readFileSync(join(samples, file), 'utf8'))) {
      const pod = document.toJS() as V1Pod & { kind?: string };
      if (pod?.kind !== 'Pod' || !pod.status?.podIP) continue;
      const name = pod.metadata?.name ?? '';
      const namespace = pod.metadata?.namespace ?? 'default';
      const current = await core.readNamespacedPod({ name, namespace });
      await core.replaceNamespacedPodStatus({
        name,
        namespace,
        body: { ...current, status: { phase: 'Running', podIP: pod.status.podIP, podIPs: [{ ip: pod.status.podIP }], conditions: [{ type: 'Ready', status: 'True' }] } },
      });
    }
  }
  const { mkdirSync } = await import('node:fs');
  mkdirSync(files, { recursive: true });
  return {
    kubeconfigPath,
    double,
    async apply(name, yaml) {
      writeFileSync(join(files, name), yaml);
      await kubectlRun(['apply', '-f', join(files, name)]);
    },
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
