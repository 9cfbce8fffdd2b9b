import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { prepareProxyContainer } from './kubelet.js';
import { DAEMON_POD, startKubernetesOrchestrator, type PodPortResolver } from './kubernetes-orchestrator.js';
import type { FaultControls, PodLogLine } from '../../apiserver-double/index.js';
import { startSampleBackend, type SampleBackend } from './sample-backend.js';
import { startTokenIssuer, type TokenIssuer } from './token-issuer.js';
import { ANNOTATIONS, LABELS } from '../../names/index.js';
import { processEnvironment } from '../../runtime/index.js';

/** The project folder, from the sources (`e2e/local-mesh`) or the build (`dist/e2e/local-mesh`). */
const HERE = fileURLToPath(new URL('.', import.meta.url));
const PROJECT_ROOT = resolve(HERE, HERE.includes('/dist/') ? '../../..' : '../..');

/** A pod of the samples, as the local mesh runs it. */
export interface LocalWorkload {
  readonly name: string;
  readonly namespace: string;
  readonly podIp: string;
  /** Where its app listens: a private address behind the sidecar, or the pod address without one. */
  readonly appIp: string;
  readonly serviceAccount: string;
  readonly ports: readonly number[];
  readonly kind: 'sidecar' | 'router' | 'none';
  /** A backend answering `/ip` and `/headers` (the clients have no server). */
  readonly serves: boolean;
}

export interface LocalMeshOptions {
  /** A fresh folder for the config folder, the daemon's and the agents' files. */
  readonly workDir: string;
  /** The config folder to start from; default `deploy/samples/config`. */
  readonly samples?: string;
  /**
   * Only these files of `samples` (`namespaces.yaml`, `workloads-foo.yaml`, …); all by default. Each
   * meshed pod costs an agent and its data plane, two programs to start: a test leaves out the
   * pods it never calls.
   */
  readonly sampleFiles?: readonly string[];
  /** The token issuer's port; default a free one (the sample policies name 15080). */
  readonly issuerPort?: number;
  /** Fixed daemon ports (15010, 15012, 8080, 15014 by hand); free ones by default. */
  readonly fixedPorts?: boolean;
  /** Daemon debounce (PILOT_DEBOUNCE_AFTER); default 50ms so policy changes apply fast. */
  readonly debounce?: string;
  /** Further settings of the daemon (PILOT_WORKLOAD_ENTRY_GRACE_PERIOD, for example): its env, or the chart's `pilot.env`. */
  readonly daemonEnv?: Readonly<Record<string, string>>;
  readonly log?: (line: string) => void;
  /** `folder` (default): policies are files of the config folder; `kubernetes`: the API server double, `kubectl apply`. */
  readonly orchestrator?: 'folder' | 'kubernetes';
  /** Further settings of every agent (PROXY_XDS_VIA_AGENT, for example). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * Further proxy config of every agent: its PROXY_CONFIG in config-folder mode, the mesh config's
   * `defaultConfig` in Kubernetes mode. `terminationDrainDuration` defaults to 1ms here (the
   * product's 5s): nobody's traffic is left to drain when the whole mesh stops, and every agent
   * would otherwise hold `stop()` for the full drain.
   */
  readonly proxyConfig?: Readonly<Record<string, unknown>>;
  /**
   * The second octet of every pod address (`127.0.1.10` becomes `127.<block>.1.10`), so that
   * meshes of tests running at the same time do not share addresses. Default 0; at most 154.
   */
  readonly addressBlock?: number;
  /** Kubernetes mode: where the ports of pods the test registers itself are served (an add-on's, for example). */
  readonly extraPods?: PodPortResolver;
  /** Config-folder mode: the daemon's mesh config (`--meshConfig`, its default path), as YAML. */
  readonly meshConfig?: string;
}

export interface LocalMesh {
  readonly configDir: string;
  /** In Kubernetes mode: the kubeconfig of the API server double, for `kubectl` and `meshctl`. */
  readonly kubeconfigPath?: string;
  /** In Kubernetes mode: the API server double's fault switches (dropped watches, 410 Gone, refused connections). */
  readonly apiServerFaults?: FaultControls;
  readonly issuer: TokenIssuer;
  readonly workloads: readonly LocalWorkload[];
  readonly daemon: {
    readonly httpPort: number;
    readonly securePort: number;
    readonly grpcPort: number;
    readonly monitoringPort: number;
    readonly httpsPort: number;
  };
  /** The meshed client's sidecar outbound (HTTP proxy) address: `http://<sleep pod>:15001`. */
  proxyOf(namespace: string): string;
  /** Applies a policy: a file written into the config folder, or `kubectl apply` in Kubernetes mode. */
  apply(name: string, yaml: string): Promise<void>;
  /** Removes it: the file deleted, or `kubectl delete`. */
  remove(name: string): Promise<void>;
  /** Config-folder mode: rewrites the daemon's mesh config file (the daemon watches it). */
  setMeshConfig(yaml: string): void;
  /** Waits until every proxy's readiness answers 200. */
  waitReady(timeoutMs?: number): Promise<void>;
  /** Kills the daemon (SIGKILL: no drain, no goodbye) and waits until it is gone. */
  killDaemon(): Promise<void>;
  /** Starts the daemon again on the same ports (in Kubernetes mode, the same pod's container) and waits until it is ready. */
  startDaemon(): Promise<void>;
  /** The daemon's and the agents' processes (`meshd`, `<namespace>/<pod>`) still running, for benchmarks that watch them. */
  processes(): readonly { readonly name: string; readonly pid: number }[];
  stop(): Promise<void>;
}

/**
 * A port for the daemon, free a moment ago: picked below Linux's ephemeral range (32768–60999),
 * as `testing/wait-for.ts` does (not built into this program), because a released ephemeral port
 * can become the source port of any outgoing connection before the daemon binds it.
 */
async function freePort(taken: ReadonlySet<number>): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (taken.has(port)) continue;
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port on 127.0.0.1 from 20000 to 32767');
}

/** Five different free ports for the daemon's servers (a port stays free until the daemon binds it). */
async function daemonPorts(): Promise<LocalMesh['daemon']> {
  const taken = new Set<number>();
  const next = async (): Promise<number> => {
    const port = await freePort(taken);
    taken.add(port);
    return port;
  };
  return { grpcPort: await next(), securePort: await next(), httpPort: await next(), monitoringPort: await next(), httpsPort: await next() };
}

/** `127.A.B.C` → `127.(A+100).B.C`: the app's private address beside the pod address. */
export function appAddressOf(podIp: string): string {
  const [first, second, ...rest] = podIp.split('.');
  return [first, String(Number(second) + 100), ...rest].join('.');
}

function readWorkloads(configDir: string): LocalWorkload[] {
  const workloads: LocalWorkload[] = [];
  for (const file of readdirSync(configDir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()) {
    for (const document of parseAllDocuments(readFileSync(join(configDir, file), 'utf8'))) {
      const object = document.toJS() as {
        kind?: string;
        metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
        spec?: { serviceAccountName?: string; containers?: { ports?: { containerPort: number }[] }[] };
        status?: { podIP?: string };
      };
      if (object?.kind !== 'Pod' || !object.status?.podIP) continue;
      const labels = object.metadata?.labels ?? {};
      const meshed = object.metadata?.annotations?.[ANNOTATIONS.status] !== undefined || labels[LABELS.tlsMode] === 'mesh';
      const router = labels['mesh'] === 'ingressgateway';
      const kind = router ? 'router' : meshed ? 'sidecar' : 'none';
      const podIp = object.status.podIP;
      const ports = (object.spec?.containers ?? []).flatMap((container) => (container.ports ?? []).map((port) => port.containerPort));
      workloads.push({
        name: object.metadata?.name ?? '',
        namespace: object.metadata?.namespace ?? 'default',
        podIp,
        appIp: kind === 'sidecar' ? appAddressOf(podIp) : podIp,
        serviceAccount: object.spec?.serviceAccountName ?? 'default',
        ports,
        kind,
        serves: !router && ports.length > 0,
      });
    }
  }
  return workloads;
}

/** Rewrites the pod addresses of the config folder's files into `127.<block>.x.y`. */
function moveToAddressBlock(configDir: string, block: number): void {
  if (!Number.isInteger(block) || block < 0 || block > 154) throw new Error(`addressBlock must be an integer from 0 to 154, got ${block}`);
  for (const file of readdirSync(configDir).filter((name) => name.endsWith('.yaml'))) {
    const path = join(configDir, file);
    writeFileSync(path, readFileSync(path, 'utf8').replace(/\b127\.0\.([1-9]\d*)\.(\d+)\b/g, `127.${block}.$1.$2`));
  }
}

/** The last lines each container wrote (`<namespace>/<pod>/<container>`): what `kubectl logs` reads in Kubernetes mode. */
const LOG_LINES_KEPT = 5000;
function newContainerLogs(): { write(container: string, line: string): void; read(container: string): readonly PodLogLine[] | undefined } {
  const logs = new Map<string, PodLogLine[]>();
  return {
    write(container, line) {
      let lines = logs.get(container);
      if (!lines) logs.set(container, (lines = []));
      lines.push({ time: Date.now(), text: line });
      if (lines.length > LOG_LINES_KEPT) lines.splice(0, lines.length - LOG_LINES_KEPT);
    },
    read: (container) => logs.get(container),
  };
}

/** The last lines each started program wrote: what a failed start reports. */
const OUTPUT_TAIL_LINES = 30;
const outputTails = new WeakMap<ChildProcess, string[]>();

function startProgram(
  program: string,
  args: readonly string[],
  env: Record<string, string>,
  cwd: string,
  log: (line: string) => void,
  tag: string,
  capture?: (line: string) => void,
): ChildProcess {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'bin', `${program}.js`), ...args], {
    cwd,
    env: { PATH: processEnvironment()['PATH'] ?? '', HOME: processEnvironment()['HOME'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  outputTails.set(child, tail);
  const forward = (chunk: Buffer): void => {
    for (const line of chunk.toString().split('\n')) {
      if (line.trim() === '') continue;
      log(`[${tag}] ${line}`);
      capture?.(line);
      tail.push(line);
      if (tail.length > OUTPUT_TAIL_LINES) tail.shift();
    }
  };
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  return child;
}

// Not testing/wait-for.ts: the local mesh ships in dist/ (`npm run local`), where no testing/ folder goes.
async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 50));
  }
}

/** Waits for the daemon's readiness; if it exits or never gets ready, the error carries its last output. */
async function waitForDaemon(daemon: ChildProcess, readyUrl: string, timeoutMs: number): Promise<void> {
  const exited = (): boolean => daemon.exitCode !== null || daemon.signalCode !== null;
  try {
    await waitFor(
      async () => {
        if (exited()) throw new Error('exited');
        return (await fetch(readyUrl)).status === 200;
      },
      timeoutMs,
      'the daemon',
    );
    return;
  } catch {
    // Reported below with what the daemon said.
  }
  const state = exited() ? `it exited (${daemon.exitCode ?? daemon.signalCode})` : `not ready within ${timeoutMs} ms at ${readyUrl}`;
  throw new Error(`the daemon did not start: ${state}; its last output:\n${(outputTails.get(daemon) ?? []).join('\n')}`);
}

/**
 * The whole mesh on one machine: the daemon on a config folder, a backend and a sidecar agent
 * (with its embedded data plane) per meshed pod of the samples, unmeshed backends on their pod
 * addresses, the ingress gateway, and a token issuer for workload and end-user tokens.
 */
export async function startLocalMesh(options: LocalMeshOptions): Promise<LocalMesh> {
  const log = options.log ?? (() => undefined);
  const configDir = join(options.workDir, 'config');
  const samples = options.samples ?? join(PROJECT_ROOT, 'deploy/samples/config');
  if (options.sampleFiles) {
    mkdirSync(configDir, { recursive: true });
    for (const file of options.sampleFiles) cpSync(join(samples, file), join(configDir, file));
  } else cpSync(samples, configDir, { recursive: true });
  if (options.addressBlock) moveToAddressBlock(configDir, options.addressBlock);
  const workloads = readWorkloads(configDir);
  const ports = options.fixedPorts ? { grpcPort: 15010, securePort: 15012, httpPort: 8080, monitoringPort: 15014, httpsPort: 15017 } : await daemonPorts();
  const containerLogs = newContainerLogs();
  const proxyConfigOfAgents = { terminationDrainDuration: '1ms', ...options.proxyConfig };
  const kubernetes =
    options.orchestrator === 'kubernetes'
      ? await startKubernetesOrchestrator(
          options.workDir,
          configDir,
          PROJECT_ROOT,
          { ...ports, debounce: options.debounce ?? '50ms', env: options.daemonEnv ?? {}, proxyConfig: proxyConfigOfAgents },
          (namespace, pod, container) => containerLogs.read(`${namespace}/${pod}/${container}`),
          options.extraPods,
        )
      : undefined;
  const issuer = await startTokenIssuer('127.0.0.1', options.issuerPort ?? 0);
  const processes: ChildProcess[] = [];
  const processNames = new Map<ChildProcess, string>();
  const launched = (child: ChildProcess, name: string): void => {
    processes.push(child);
    processNames.set(child, name);
  };
  const backends: SampleBackend[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 8000).unref();
          }),
      ),
    );
    await Promise.all(backends.map((backend) => backend.close()));
    await issuer.close();
    await kubernetes?.close();
  };
  try {
    const daemonDir = join(options.workDir, 'daemon');
    mkdirSync(daemonDir, { recursive: true });
    // `--meshConfig`'s default, relative to the daemon's working folder.
    const meshConfigFile = join(daemonDir, 'etc/mesh/config/mesh');
    const setMeshConfig = (yaml: string): void => {
      mkdirSync(dirname(meshConfigFile), { recursive: true });
      writeFileSync(meshConfigFile, yaml);
    };
    if (options.meshConfig !== undefined) setMeshConfig(options.meshConfig);
    const startFolderDaemon = (): ChildProcess =>
      startProgram(
        'pilot-discovery',
        ['discovery', '--configDir', configDir, ...listeners],
        { JWT_RULE: issuer.jwtRule, PILOT_DEBOUNCE_AFTER: options.debounce ?? '50ms', ...options.daemonEnv },
        daemonDir,
        log,
        'meshd',
      );
    const listeners = [
      '--grpcAddr',
      `127.0.0.1:${ports.grpcPort}`,
      '--secureGRPCAddr',
      `127.0.0.1:${ports.securePort}`,
      '--httpAddr',
      `127.0.0.1:${ports.httpPort}`,
      '--monitoringAddr',
      `127.0.0.1:${ports.monitoringPort}`,
      '--httpsAddr',
      `127.0.0.1:${ports.httpsPort}`,
      '--ctrlz_port',
      '0',
    ];
    // In Kubernetes mode as the meshd chart's Deployment runs it, its listeners moved to the local ports.
    const daemonLaunch = kubernetes ? await kubernetes.daemonLaunch(daemonDir) : undefined;
    const startDaemon = (): ChildProcess =>
      daemonLaunch
        ? startProgram('pilot-discovery', [...daemonLaunch.args, ...listeners], daemonLaunch.env, daemonDir, log, 'meshd', (line) =>
            containerLogs.write(`mesh-system/${DAEMON_POD}/discovery`, line),
          )
        : startFolderDaemon();
    const daemon = startDaemon();
    launched(daemon, 'meshd');
    await waitForDaemon(daemon, `http://127.0.0.1:${ports.httpPort}/ready`, 30_000);
    // In Kubernetes mode the pods are applied now, through the daemon's injection webhook.
    if (kubernetes) await kubernetes.waitForWebhooks(20_000);
    const storedPods = kubernetes ? await kubernetes.applyWorkloads(appAddressOf) : [];
    const root = kubernetes ? '' : readFileSync(join(daemonDir, 'var/lib/mesh/ca/root-cert.pem'), 'utf8');

    for (const workload of workloads) {
      if (workload.serves) backends.push(...(await startSampleBackend(workload.appIp, workload.ports)));
      if (workload.kind === 'none') continue;
      const dir = join(options.workDir, 'pods', `${workload.namespace}-${workload.name}`);
      const tag = `${workload.namespace}/${workload.name}`;
      if (kubernetes) {
        // The kubelet's part: the proxy container as the API server stored it, injected.
        const pod = storedPods.find((stored) => stored.metadata?.name === workload.name && stored.metadata?.namespace === workload.namespace);
        const launch = pod ? await prepareProxyContainer(pod, dir, kubernetes.kubelet) : undefined;
        if (!launch) throw new Error(`the pod ${tag} was not injected`);
        launched(
          startProgram('pilot-agent', launch.args, { ...launch.env, ...options.agentEnv }, dir, log, tag, (line) =>
            containerLogs.write(`${workload.namespace}/${workload.name}/mesh-proxy`, line),
          ),
          tag,
        );
        continue;
      }
      mkdirSync(join(dir, 'var/run/secrets/tokens'), { recursive: true });
      mkdirSync(join(dir, 'var/run/secrets/mesh'), { recursive: true });
      writeFileSync(join(dir, 'var/run/secrets/tokens/mesh-token'), await issuer.workloadToken(workload.namespace, workload.serviceAccount));
      writeFileSync(join(dir, 'var/run/secrets/mesh/root-cert.pem'), root);
      const proxyConfig = {
        ...proxyConfigOfAgents,
        discoveryAddress: `127.0.0.1:${ports.securePort}`,
        proxyMetadata: { POD_NAME: workload.name, ...(workload.kind === 'sidecar' ? { MESH_META_APP_ADDRESS: workload.appIp } : {}) },
      };
      launched(
        startProgram(
          'pilot-agent',
          ['proxy', workload.kind],
          {
            INSTANCE_IP: workload.podIp,
            POD_NAMESPACE: workload.namespace,
            SERVICE_ACCOUNT: workload.serviceAccount,
            PROXY_CONFIG: JSON.stringify(proxyConfig),
            ECC_SIGNATURE_ALGORITHM: 'ECDSA',
            ...options.agentEnv,
          },
          dir,
          log,
          tag,
        ),
        tag,
      );
    }
    const mesh: LocalMesh = {
      configDir,
      ...(kubernetes ? { kubeconfigPath: kubernetes.kubeconfigPath, apiServerFaults: kubernetes.double.faults } : {}),
      issuer,
      workloads,
      daemon: ports,
      proxyOf(namespace) {
        const client = workloads.find((workload) => workload.namespace === namespace && workload.kind === 'sidecar' && !workload.serves);
        if (!client) throw new Error(`no meshed client in ${namespace}`);
        return `http://${client.podIp}:15001`;
      },
      apply: async (name, yaml) => (kubernetes ? kubernetes.apply(name, yaml) : writeFileSync(join(configDir, name), yaml)),
      remove: async (name) => (kubernetes ? kubernetes.remove(name) : rmSync(join(configDir, name), { force: true })),
      setMeshConfig,
      async waitReady(timeoutMs = 30_000) {
        for (const workload of workloads.filter((candidate) => candidate.kind !== 'none')) {
          await waitFor(
            async () => (await fetch(`http://${workload.podIp}:15021/healthz/ready`)).status === 200,
            timeoutMs,
            `the proxy of ${workload.namespace}/${workload.name}`,
          );
        }
      },
      async killDaemon() {
        const daemon = processes[0] as ChildProcess;
        if (daemon.exitCode !== null || daemon.signalCode !== null) return;
        await new Promise<void>((done) => {
          daemon.once('exit', () => done());
          daemon.kill('SIGKILL');
        });
      },
      async startDaemon() {
        const daemon = startDaemon();
        processes[0] = daemon;
        processNames.set(daemon, 'meshd');
        await waitForDaemon(daemon, `http://127.0.0.1:${ports.httpPort}/ready`, 30_000);
      },
      processes: () =>
        processes.flatMap((child) =>
          child.pid !== undefined && child.exitCode === null && child.signalCode === null ? [{ name: processNames.get(child) ?? '?', pid: child.pid }] : [],
        ),
      stop,
    };
    return mesh;
  } catch (error) {
    await stop();
    throw error;
  }
}
