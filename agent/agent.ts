import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import {
  AGENT_SCOPES,
  newLogging,
  newManager,
  newMetrics,
  parseDuration,
  readBuildInfo,
  runnableOf,
  type Logging,
  type LoggingOptions,
  type Manager,
  type Settings,
} from '../runtime/index.js';
import { loadEnvoyProtos, SDS_PROTO_FILES, type EnvoyProtos } from '../xds/envoy/index.js';
import { AGENT_PATHS } from './agent-paths.js';
import { agentSettingsFromSettings, type BootstrapSettings } from './agent-settings.js';
import { asUsageError, newControlPlaneAccess, type ControlPlaneAccess } from './control-plane-access.js';
import { parseAppProbers } from './proxy/app-probers.js';
import { dataPlaneLaunch } from './proxy/data-plane-launch.js';
import { newDataPlaneProcess, type DataPlaneProcess } from './proxy/data-plane-process.js';
import { buildEnvoyBootstrap, mergeBootstrap } from './proxy/envoy-bootstrap.js';
import { buildGrpcBootstrap } from './proxy/grpc-bootstrap.js';
import type { ProxyConfig } from '../crds/mesh-config/index.js';
import { buildProxyIdentity, loadProxyConfig, metadataFromEnvironment, parsePodLabels, type ProxyIdentity, type ProxyType } from './proxy/proxy-identity.js';
import { newStatusServer } from './proxy/status-server.js';
import { newSdsServer } from './sds/sds-server.js';
import { debugTapHost, debugTapInspector, DEBUG_TAP_PORT } from './xds-proxy/debug-tap.js';
import { newXdsProxy } from './xds-proxy/xds-proxy.js';
import type { AgentSubscription } from './xds-proxy/agent-subscriptions.js';
import { newAgentDns, type AgentDns } from './dns/dns-runnable.js';
import { parseReadinessProbe } from './health/readiness-probe.js';
import { newWorkloadHealth, type WorkloadHealth } from './health/workload-health.js';
import { newAgentReports, type AgentReports } from './xds-proxy/agent-reports.js';

/** Everything the agent is assembled from, typed: the command line maps its flags here (cli/). */
export interface AgentOptions {
  readonly type: ProxyType;
  /** Read through `agent-settings.ts` only. */
  readonly settings: Settings<'pilot-agent'>;
  readonly logging: Partial<LoggingOptions>;
  /** `--concurrency`: the data plane's worker threads (0: the proxy config's). */
  readonly concurrency: number;
  /** `--domain`; '' for `<namespace>.svc.cluster.local`. */
  readonly domain: string;
  /** `--meshConfig`: the mesh config file (its `defaultConfig` is the proxy config). */
  readonly meshConfigFile: string;
  readonly proxyLogLevel: string;
  readonly proxyComponentLogLevel: string;
  readonly serviceCluster: string;
  /** `--templateFile`: a bootstrap merged under ours; '' for none. */
  readonly templateFile: string;
}

/** The assembled agent: start its manager; close its logging once the manager has stopped. */
export interface Agent {
  readonly manager: Manager;
  readonly logging: Logging;
  readonly identity: ProxyIdentity;
}

/** The pod's labels as the downward API mounts them; undefined outside a pod (a VM). */
async function readPodLabels(): Promise<Record<string, string> | undefined> {
  try {
    return parsePodLabels(await readFile(AGENT_PATHS.podLabels, 'utf8'));
  } catch {
    return undefined;
  }
}

function hostForUrl(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

/**
 * Assembles pilot-agent beside one proxy, on a manager: certificates and the SDS server, the xDS
 * proxy and the debug tap, and the status port start first (the first certificate is requested
 * before the Envoy protos load, the slowest part of starting); the data plane (Envoy, or the
 * embedded one; none for proxyless gRPC) once they serve. Shutdown runs backwards: the data plane
 * drains first. Throws a `UsageError` for settings that cannot be used.
 */
export async function newAgent(options: AgentOptions): Promise<Agent> {
  const logging = newLogging(options.logging, AGENT_SCOPES);
  const log = logging.scope('default');
  const metrics = newMetrics('pilot-agent');
  const proxyConfig = loadProxyConfig(options.meshConfigFile, agentSettingsFromSettings(options.settings).proxyConfig);
  // The proxy config's proxyMetadata is environment to the agent (a VM's mesh.yaml turns DNS capture on so).
  const settings = agentSettingsFromSettings(options.settings.withUnderlay(proxyConfig.proxyMetadata ?? {}));
  const labels = await readPodLabels();
  const badMetaJson = metadataFromEnvironment(settings.pod).invalid;
  if (badMetaJson.length > 0) log.warn({ keys: badMetaJson }, 'MESH_METAJSON_ values that are not JSON are left out of the node metadata');
  const identity = buildProxyIdentity({
    type: options.type,
    pod: { ...settings.pod, ...(labels ? { labels } : {}) },
    domain: options.domain,
    proxyConfig,
    meshVersion: readBuildInfo().version,
  });
  // A proxyless gRPC application gets a bootstrap and certificate files instead of a data plane.
  const proxyless = identity.metadata['GENERATOR'] === 'grpc';
  const viaAgent = settings.xdsViaAgent || proxyless;
  const outputCerts = settings.outputCerts || (proxyless ? resolve(AGENT_PATHS.grpcCerts) : '');
  const appProbes = asUsageError(() => parseAppProbers(settings.appProbers));
  const readinessProbe = asUsageError(() => parseReadinessProbe(proxyConfig.readinessProbe));
  const drainMs = parseDuration(proxyConfig.terminationDrainDuration ?? '5s');
  const manager = newManager({ log, shutdownDurationMs: drainMs + 10_000 });
  const access = await newControlPlaneAccess({ access: settings.access, identity, proxyConfig, outputCerts, clock: manager.clock, logging, metrics });
  const { certificates } = access;
  // Loaded once, by the first runnable that needs them (after the first certificate request is out).
  let protos: EnvoyProtos | undefined;
  const sdsProtos = (): EnvoyProtos => (protos ??= loadEnvoyProtos({ files: SDS_PROTO_FILES }));

  manager.add(
    runnableOf(
      'workload-certificates',
      async () => {
        for (const trust of access.trust) await trust.start();
        certificates.start().catch((error: Error) => log.error({ error: error.message }, 'no workload certificate'));
        return () => {
          certificates.stop();
          for (const trust of access.trust) trust.stop();
        };
      },
      { group: 'httpServer' },
    ),
  );
  manager.add(
    runnableOf(
      'sds',
      async () => {
        const sds = newSdsServer({
          protos: sdsProtos(),
          socketPath: AGENT_PATHS.sdsSocket,
          current: () => certificates.current(),
          log: logging.scope('sds'),
          metrics,
        });
        certificates.onChange(() => sds.push());
        await sds.start();
        if (certificates.current()) sds.push();
        return () => sds.stop();
      },
      { group: 'httpServer' },
    ),
  );
  // MESH_META_DNS_CAPTURE: the DNS proxy, fed by the name table the agent asks for on the proxy's stream.
  const dns: AgentDns | undefined =
    viaAgent && !proxyless && identity.metadata['DNS_CAPTURE'] === 'true'
      ? newAgentDns({
          protos: sdsProtos,
          resolvConfPath: AGENT_PATHS.resolvConf,
          instanceIp: identity.instanceIp,
          proxyNamespace: identity.namespace,
          proxyDomain: identity.domain,
          log: logging.scope('dns'),
          metrics,
        })
      : undefined;
  if (dns) manager.add(dns.runnable);
  else if (identity.metadata['DNS_CAPTURE'] === 'true' && !proxyless) {
    logging.scope('dns').warn({}, 'DNS capture needs the name table from the xDS stream through the agent (PROXY_XDS_VIA_AGENT=true): no DNS proxy');
  }
  // The agent's reports on the proxy's stream (the app's health, below).
  const reports: AgentReports = newAgentReports();
  if (viaAgent) manager.add(xdsProxyRunnable(access, logging, metrics, { protos: sdsProtos, subscriptions: dns ? [dns.subscription] : [], reports }));
  // PROXY_XDS_DEBUG_VIA_AGENT: the daemon's debug views for tools in the pod, on the agent's credentials.
  if (settings.debugViaAgent) manager.add(debugTapRunnable(access, identity, sdsProtos, logging));

  await writeBootstraps(options, { identity, proxyConfig, access, viaAgent, proxyless, outputCerts, bootstrapSettings: settings.bootstrap });
  // Envoy when an `envoy` binary is on the path, else the embedded data plane's program; none for proxyless apps.
  const dataPlane: DataPlaneProcess | undefined = proxyless
    ? undefined
    : newDataPlaneProcess({
        launch: await dataPlaneLaunch({
          bootstrapPath: resolve(AGENT_PATHS.bootstrap),
          proxyLogLevel: options.proxyLogLevel,
          proxyComponentLogLevel: options.proxyComponentLogLevel,
          concurrency: options.concurrency || (proxyConfig.concurrency ?? 0),
          drainDuration: proxyConfig.drainDuration ?? '45s',
        }),
        adminUrl: `http://${hostForUrl(identity.instanceIp)}:${proxyConfig.proxyAdminPort ?? 15000}`,
        inboundOnlyDrain: options.type === 'sidecar',
        log,
      });
  // readinessProbe (a VM's, from its WorkloadGroup): the app's health, reported on the proxy's stream.
  const health: WorkloadHealth | undefined =
    readinessProbe && viaAgent && !proxyless
      ? newWorkloadHealth({ probe: readinessProbe, gate: () => dataPlane?.notReady(), reports, clock: manager.clock, log: logging.scope('healthcheck') })
      : undefined;
  const appAddress = identity.metadata['APP_ADDRESS'];
  const status = newStatusServer({
    appProbes,
    ...(typeof appAddress === 'string' && appAddress !== '' ? { appHost: appAddress } : {}),
    notReady: async () =>
      certificates.current() === undefined ? 'no workload certificate yet' : (dns?.proxy.notReady() ?? (await dataPlane?.notReady()) ?? health?.notReady()),
    metrics,
  });
  manager.add(
    runnableOf(
      'status-server',
      async () => {
        await status.listen(identity.instanceIp, settings.statusPort);
        return () => status.close();
      },
      { group: 'httpServer' },
    ),
  );
  if (health) manager.add(health.runnable);
  if (dataPlane) {
    manager.add(
      runnableOf('data-plane', () => {
        dataPlane.start();
        return async () => {
          log.info({ drainMs }, 'draining');
          await dataPlane.drain(drainMs);
          await dataPlane.stop();
        };
      }),
    );
  }
  manager.add(
    runnableOf('agent-started', () => log.info({ node: identity.nodeId, discovery: access.discoveryAddress, ca: access.caAddress }, 'proxy agent started')),
  );
  return { manager, logging, identity };
}

function xdsProxyRunnable(
  access: ControlPlaneAccess,
  logging: Logging,
  metrics: Parameters<typeof newXdsProxy>[0]['metrics'],
  own: { protos: () => EnvoyProtos; subscriptions: readonly AgentSubscription[]; reports: AgentReports },
) {
  const proxy = newXdsProxy({
    listen: `unix:${resolve(AGENT_PATHS.xdsSocket)}`,
    upstream: access.discoveryAddress,
    credentials: access.xdsCredentials,
    channelOptions: access.xdsChannelOptions,
    metadata: () => access.xdsMetadata(),
    log: logging.scope('adsc'),
    ...(metrics ? { metrics } : {}),
    agentSubscriptions: own,
  });
  return runnableOf(
    'xds-proxy',
    async () => {
      await proxy.start();
      return () => proxy.stop();
    },
    { group: 'httpServer' },
  );
}

function debugTapRunnable(access: ControlPlaneAccess, identity: ProxyIdentity, protos: () => EnvoyProtos, logging: Logging) {
  return runnableOf(
    'debug-tap',
    async () => {
      const tap = newXdsProxy({
        listen: `${debugTapHost(identity.instanceIp)}:${DEBUG_TAP_PORT}`,
        upstream: access.discoveryAddress,
        credentials: access.xdsCredentials,
        channelOptions: access.xdsChannelOptions,
        metadata: () => access.xdsMetadata(),
        inspectRequest: debugTapInspector(protos(), { id: identity.nodeId, metadata: identity.metadata }),
        log: logging.scope('xdsproxy'),
      });
      await tap.start();
      return () => tap.stop();
    },
    { group: 'httpServer' },
  );
}

interface BootstrapInputs {
  readonly identity: ProxyIdentity;
  readonly proxyConfig: ProxyConfig;
  readonly access: ControlPlaneAccess;
  readonly viaAgent: boolean;
  readonly proxyless: boolean;
  readonly outputCerts: string;
  readonly bootstrapSettings: BootstrapSettings;
}

/** The data plane's bootstrap (with `--templateFile` under it and MESH_BOOTSTRAP_OVERRIDE over it), and a proxyless app's gRPC bootstrap. */
async function writeBootstraps(options: AgentOptions, inputs: BootstrapInputs): Promise<void> {
  const { identity, access, viaAgent, bootstrapSettings } = inputs;
  let bootstrap = buildEnvoyBootstrap({
    identity,
    xdsAddress: viaAgent ? `unix:${resolve(AGENT_PATHS.xdsSocket)}` : access.discoveryAddress,
    sdsSocketPath: AGENT_PATHS.sdsSocket,
    listenAddress: identity.instanceIp,
    delta: bootstrapSettings.deltaXds,
    // Straight to the daemon the data plane authenticates with the workload certificate, as the reference's MUTUAL_TLS policy.
    ...(!viaAgent && access.secure ? { xdsTls: { caFile: resolve(access.xdsRootsPath), serverName: access.serverName(access.discoveryAddress) } } : {}),
    serviceCluster: options.serviceCluster,
    metricsPort: bootstrapSettings.metricsPort,
  });
  if (options.templateFile !== '') bootstrap = mergeBootstrap(JSON.parse(await readFile(options.templateFile, 'utf8')) as Record<string, unknown>, bootstrap);
  const override = bootstrapSettings.overrideFile;
  if (override !== '') bootstrap = mergeBootstrap(bootstrap, JSON.parse(await readFile(override, 'utf8')) as Record<string, unknown>);
  await mkdir(dirname(AGENT_PATHS.bootstrap), { recursive: true });
  await writeFile(AGENT_PATHS.bootstrap, `${JSON.stringify(bootstrap, null, 2)}\n`);
  if (inputs.proxyless) {
    await writeFile(
      AGENT_PATHS.grpcBootstrap,
      `${JSON.stringify(buildGrpcBootstrap(identity, resolve(AGENT_PATHS.xdsSocket), inputs.outputCerts), null, 2)}\n`,
    );
  }
}
