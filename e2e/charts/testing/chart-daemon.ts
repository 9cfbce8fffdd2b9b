/** A replica of the meshd chart's Deployment, started by the local kubelet against the API server double. */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, type V1Pod } from '@kubernetes/client-node';
import type { ApiServerDouble } from '../../../apiserver-double/index.js';
import { collect, startBin } from '../../../testing/run-bin.js';
import { freePort, waitFor } from '../../../testing/wait-for.js';
import { prepareContainer } from '../../local-mesh/kubelet.js';
import { errorMessage } from '../../../runtime/index.js';

export interface DaemonPorts {
  readonly grpc: number;
  readonly secure: number;
  readonly http: number;
  readonly monitoring: number;
  readonly https: number;
}

export interface ChartDaemon {
  readonly podName: string;
  readonly ports: DaemonPorts;
  readonly process: ChildProcess;
  output(): string;
  /** SIGTERM (a graceful stop, the lease released) or SIGKILL (a crash); resolves once it has exited. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

export async function freeDaemonPorts(): Promise<DaemonPorts> {
  return { grpc: await freePort(), secure: await freePort(), http: await freePort(), monitoring: await freePort(), https: await freePort() };
}

/**
 * Starts `podName`, a pod of the `deployment` Deployment in `namespace`: the container's command
 * line, env and volumes as the rendered template gives them (field references resolved, the
 * projected token written), KUBECONFIG standing in for the in-cluster API server address, and each
 * listener moved to a free loopback port (a real pod has an address of its own). Resolves once the
 * daemon answers `/ready`.
 */
export async function startChartDaemon(options: {
  kube: ApiServerDouble;
  workDir: string;
  podName: string;
  ports?: DaemonPorts;
  deployment?: string;
  namespace?: string;
}): Promise<ChartDaemon> {
  const { kube, podName } = options;
  const namespace = options.namespace ?? 'mesh-system';
  const ports = options.ports ?? (await freeDaemonPorts());
  const kubeConfig = kube.kubeConfig();
  const deployment = await kubeConfig.makeApiClient(AppsV1Api).readNamespacedDeployment({ name: options.deployment ?? 'meshd', namespace });
  const template = deployment.spec?.template;
  const pod: V1Pod = {
    metadata: { ...template?.metadata, name: podName, namespace },
    spec: template?.spec ?? { containers: [] },
    status: { podIP: '127.0.0.1', hostIP: '127.0.0.1' },
  };
  const podDir = join(options.workDir, podName);
  mkdirSync(podDir, { recursive: true });
  const launch = await prepareContainer(pod, 'discovery', podDir, {
    kubeConfig,
    issueToken: (ns, serviceAccount, audience, expirationSeconds) =>
      kube.issueToken({ namespace: ns, serviceAccount, audiences: [audience], expirationSeconds }),
  });
  if (!launch) throw new Error('the chart has no discovery container');
  const inCluster = join(podDir, 'in-cluster-kubeconfig');
  writeFileSync(inCluster, kube.kubeconfigYaml());
  const listeners = [
    '--grpcAddr',
    `127.0.0.1:${ports.grpc}`,
    '--secureGRPCAddr',
    `127.0.0.1:${ports.secure}`,
    '--httpAddr',
    `127.0.0.1:${ports.http}`,
    '--monitoringAddr',
    `127.0.0.1:${ports.monitoring}`,
    '--httpsAddr',
    `127.0.0.1:${ports.https}`,
    '--ctrlz_port',
    '0',
  ];
  const child = startBin('pilot-discovery', [...launch.args, ...listeners], { ...launch.env, KUBECONFIG: inCluster }, podDir);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const daemon: ChartDaemon = {
    podName,
    ports,
    process: child,
    output: () => output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = collect(child, 20_000).catch(() => undefined);
      child.kill(signal);
      await exited;
    },
  };
  await waitFor(async () => (await fetch(`http://127.0.0.1:${ports.http}/ready`).catch(() => undefined))?.status === 200, {
    timeoutMs: 60_000,
    description: `${podName} ready`,
  }).catch(async (error: unknown) => {
    await daemon.stop('SIGKILL');
    throw new Error(`${errorMessage(error)}; its output: ${output.slice(-3000)}`, { cause: error });
  });
  return daemon;
}
