import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { credentials, experimental, Metadata } from '@grpc/grpc-js';
import { Command } from 'commander';
import {
  AGENT_SCOPES,
  stopSignal,
  UsageError,
  loggingOptionsFrom,
  newLogging,
  newMetrics,
  newRealClock,
  parseDuration,
  type Settings,
} from '../controllers/runtime/index.js';
import { dataPlaneLaunch } from '../agent/index.js';
import { newDataPlaneProcess } from '../agent/index.js';
import { buildEnvoyBootstrap, mergeBootstrap } from '../agent/index.js';
import { buildGrpcBootstrap } from '../agent/index.js';
import { debugTapHost, debugTapInspector, DEBUG_TAP_PORT } from '../agent/index.js';
import { newXdsProxy } from '../agent/index.js';
import { buildProxyIdentity, loadProxyConfig, type ProxyType } from '../agent/index.js';
import { newStatusServer } from '../agent/index.js';
import { parseAppProbers } from '../agent/index.js';
import { newSdsServer } from '../agent/index.js';
import { newFileMountedCertificates } from '../agent/index.js';
import { credentialFetcher } from '../agent/index.js';
import { newAgentTrustBundle, staticIdentity } from '../agent/index.js';
import { newWorkloadCertificates, provisionedCertificateFiles } from '../agent/index.js';
import { loadEnvoyProtos, SDS_PROTO_FILES } from '../xds/envoy/index.js';
import { intFlag } from './flags.js';
import type { CliIo } from './run-cli.js';

/** Where a pod mounts what the agent reads and serves (relative to the working folder, as the reference's absolute paths). */
export const AGENT_PATHS = {
  token: './var/run/secrets/tokens/mesh-token',
  meshRoot: './var/run/secrets/mesh/root-cert.pem',
  sdsSocket: './var/run/secrets/workload-spiffe-uds/socket',
  bootstrap: './etc/mesh/proxy/envoy-rev.json',
  /** FILE_MOUNTED_CERTS: `cert-chain.pem`, `key.pem`, `root-cert.pem`. */
  mountedCerts: './etc/certs',
  /** The agent's xDS proxy (PROXY_XDS_VIA_AGENT). */
  xdsSocket: './etc/mesh/proxy/XDS',
  /** The bootstrap of proxyless gRPC applications, and where their certificates go without OUTPUT_CERTS. */
  grpcBootstrap: './etc/mesh/proxy/grpc-bootstrap.json',
  grpcCerts: './etc/mesh/proxy',
} as const;

interface ProxyFlags {
  concurrency: number;
  domain: string;
  meshConfig: string;
  outlierLogPath: string;
  proxyComponentLogLevel: string;
  proxyLogLevel: string;
  serviceCluster: string;
  stsPort: number;
  templateFile: string;
  tokenManagerPlugin: string;
  [logFlag: `log_${string}`]: unknown;
}

export interface ProxyCommandDeps {
  settings: Settings<'pilot-agent'>;
  /** Stops the agent; SIGINT and SIGTERM when absent. */
  signal?: AbortSignal;
}

/** A setting read at start that cannot be used is a usage error (exit 2), with the reader's message. */
function asUsageError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function hostForUrl(ip: string): string {
  return ip.includes(':') ? `[${ip}]` : ip;
}

function hostOf(address: string): string {
  return address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
}

/** Runs the agent beside one proxy until the signal: identity, certificates over SDS, the data plane, readiness. */
export async function runProxy(type: ProxyType, flags: ProxyFlags, deps: ProxyCommandDeps, io: CliIo): Promise<void> {
  const { settings } = deps;
  const logging = newLogging(loggingOptionsFrom(flags), AGENT_SCOPES);
  const log = logging.scope('default');
  const metrics = newMetrics('pilot-agent');
  const clock = newRealClock();
  const proxyConfig = loadProxyConfig(flags.meshConfig, settings.get('PROXY_CONFIG'));
  const identity = buildProxyIdentity({ type, settings, domain: flags.domain, proxyConfig });
  // A proxyless gRPC application gets a bootstrap and certificate files instead of a data plane.
  const proxyless = identity.metadata['GENERATOR'] === 'grpc';
  const viaAgent = settings.get('PROXY_XDS_VIA_AGENT') || proxyless;
  const outputCerts = settings.get('OUTPUT_CERTS') || (proxyless ? resolve(AGENT_PATHS.grpcCerts) : '');
  const discoveryAddress = proxyConfig.discoveryAddress ?? 'meshd.mesh-system.svc:15012';
  const caAddress = settings.get('CA_ADDR') || discoveryAddress;
  // PROV_CERT (a VM): the provisioned certificate authenticates to the CA and the daemon, its folder's root verifies them.
  const provisionedDir = settings.get('PROV_CERT');
  const provisioned = provisionedDir !== '' ? provisionedCertificateFiles(provisionedDir) : undefined;
  const provisionedAtStart = await provisioned?.().catch((error: Error) => {
    throw new UsageError(error.message);
  });
  const rootsPath = settings.get('CA_ROOT_CA') || (provisionedDir !== '' ? join(provisionedDir, 'root-cert.pem') : AGENT_PATHS.meshRoot);
  const xdsRootsPath = settings.get('XDS_ROOT_CA') || rootsPath;
  // The roots of the agent's own connections follow the mounted file and the CA's answers, so
  // that reconnections after a root rotation verify the daemon's new certificate.
  const caTrust = newAgentTrustBundle({ file: rootsPath, clock, log: logging.scope('cache') });
  const xdsTrust = xdsRootsPath === rootsPath ? caTrust : newAgentTrustBundle({ file: xdsRootsPath, clock, log: logging.scope('cache') });
  const token = asUsageError(() =>
    credentialFetcher({
      type: settings.get('CREDENTIAL_FETCHER_TYPE'),
      identityProvider: settings.get('CREDENTIAL_IDENTITY_PROVIDER'),
      audience: new URL(identity.spiffeId).hostname,
      tokenPath: AGENT_PATHS.token,
    }),
  );
  const serverName = (address: string): string => (isIP(hostOf(address)) ? 'localhost' : hostOf(address));

  const appProbes = asUsageError(() => parseAppProbers(settings.get('MESH_ORCH_APP_PROBERS')));
  const certificates = settings.get('FILE_MOUNTED_CERTS')
    ? newFileMountedCertificates({ dir: AGENT_PATHS.mountedCerts, clock, log: logging.scope('cache') })
    : newWorkloadCertificates({
        caAddress,
        caTrust,
        token,
        ...(provisioned ? { provisionedCertificate: provisioned } : {}),
        spiffeId: identity.spiffeId,
        ttlMs: settings.get('SECRET_TTL'),
        graceRatio: settings.get('SECRET_GRACE_PERIOD_RATIO'),
        keyType: settings.get('ECC_SIGNATURE_ALGORITHM').toUpperCase() === 'ECDSA' ? 'ecdsa' : 'rsa',
        pkcs8: settings.get('PKCS8_KEY'),
        ...(outputCerts ? { outputDir: outputCerts } : {}),
        clock,
        log: logging.scope('cache'),
        metrics,
        caServerName: serverName(caAddress),
        ...(identity.clusterId ? { clusterId: identity.clusterId } : {}),
      });
  // The certificate is on the way while the SDS protos load (the slowest part of starting).
  await caTrust.start();
  if (xdsTrust !== caTrust) await xdsTrust.start();
  const firstCertificate = certificates.start();
  firstCertificate.catch(() => undefined);
  const protos = loadEnvoyProtos({ files: SDS_PROTO_FILES });
  const sds = newSdsServer({ protos, socketPath: AGENT_PATHS.sdsSocket, current: () => certificates.current(), log: logging.scope('sds'), metrics });
  certificates.onChange(() => sds.push());
  // Listening at once: the first certificate is served the moment it arrives, while the rest is set up.
  const sdsListening = sds.start();
  sdsListening.catch(() => undefined);

  const secureXds = proxyConfig.controlPlaneAuthPolicy !== 'NONE';
  const xdsCredentials = !secureXds
    ? credentials.createInsecure()
    : experimental.createCertificateProviderChannelCredentials(xdsTrust, provisionedAtStart ? staticIdentity(provisionedAtStart) : null);
  const xdsChannelOptions = secureXds ? { 'grpc.ssl_target_name_override': serverName(discoveryAddress) } : {};
  const xdsMetadata = async (): Promise<Metadata> => {
    const metadata = new Metadata();
    // With a provisioned certificate the TLS client certificate is the credential; a token is added when there is one.
    const bearer = provisioned ? await token().catch(() => undefined) : await token();
    if (bearer) metadata.set('authorization', `Bearer ${bearer}`);
    return metadata;
  };
  const xdsProxy = viaAgent
    ? newXdsProxy({ listen: `unix:${resolve(AGENT_PATHS.xdsSocket)}`, upstream: discoveryAddress, credentials: xdsCredentials, channelOptions: xdsChannelOptions, metadata: xdsMetadata, log: logging.scope('adsc'), metrics })
    : undefined;
  // PROXY_XDS_DEBUG_VIA_AGENT: the daemon's debug views for tools in the pod, on the agent's credentials.
  const debugTap = settings.get('PROXY_XDS_DEBUG_VIA_AGENT')
    ? newXdsProxy({
        listen: `${debugTapHost(identity.instanceIp)}:${DEBUG_TAP_PORT}`,
        upstream: discoveryAddress,
        credentials: xdsCredentials,
        channelOptions: xdsChannelOptions,
        metadata: xdsMetadata,
        inspectRequest: debugTapInspector(protos, { id: identity.nodeId, metadata: identity.metadata }),
        log: logging.scope('xdsproxy'),
      })
    : undefined;

  let bootstrap = buildEnvoyBootstrap({
    identity,
    xdsAddress: viaAgent ? `unix:${resolve(AGENT_PATHS.xdsSocket)}` : discoveryAddress,
    sdsSocketPath: AGENT_PATHS.sdsSocket,
    listenAddress: identity.instanceIp,
    delta: settings.get('MESH_DELTA_XDS'),
    // Straight to the daemon the data plane authenticates with the workload certificate, as the reference's MUTUAL_TLS policy.
    ...(!viaAgent && secureXds ? { xdsTls: { caFile: resolve(xdsRootsPath), serverName: serverName(discoveryAddress) } } : {}),
    serviceCluster: flags.serviceCluster,
    metricsPort: settings.get('PROXY_METRICS_PORT'),
  });
  if (flags.templateFile !== '') bootstrap = mergeBootstrap(JSON.parse(await readFile(flags.templateFile, 'utf8')) as Record<string, unknown>, bootstrap);
  const override = settings.get('MESH_BOOTSTRAP_OVERRIDE');
  if (override !== '') bootstrap = mergeBootstrap(bootstrap, JSON.parse(await readFile(override, 'utf8')) as Record<string, unknown>);
  await mkdir(dirname(AGENT_PATHS.bootstrap), { recursive: true });
  await writeFile(AGENT_PATHS.bootstrap, `${JSON.stringify(bootstrap, null, 2)}\n`);
  if (proxyless) {
    await writeFile(AGENT_PATHS.grpcBootstrap, `${JSON.stringify(buildGrpcBootstrap(identity, resolve(AGENT_PATHS.xdsSocket), outputCerts), null, 2)}\n`);
  }

  // Envoy when an `envoy` binary is on the path, else the embedded data plane's program; none for proxyless apps.
  const dataPlane = proxyless
    ? undefined
    : newDataPlaneProcess({
        launch: await dataPlaneLaunch({
          bootstrapPath: resolve(AGENT_PATHS.bootstrap),
          proxyLogLevel: flags.proxyLogLevel,
          proxyComponentLogLevel: flags.proxyComponentLogLevel,
          concurrency: flags.concurrency || (proxyConfig.concurrency ?? 0),
          drainDuration: proxyConfig.drainDuration ?? '45s',
        }),
        adminUrl: `http://${hostForUrl(identity.instanceIp)}:${proxyConfig.proxyAdminPort ?? 15000}`,
        inboundOnlyDrain: type === 'sidecar',
        log: logging.scope('default'),
      });
  const appAddress = identity.metadata['APP_ADDRESS'];
  const status = newStatusServer({
    appProbes,
    ...(appAddress ? { appHost: appAddress } : {}),
    notReady: async () => (certificates.current() === undefined ? 'no workload certificate yet' : dataPlane?.notReady()),
    metrics,
  });

  const { signal, release } = stopSignal(deps.signal);
  try {
    await sdsListening;
    await xdsProxy?.start();
    await debugTap?.start();
    await status.listen(identity.instanceIp, settings.get('PROXY_STATUS_PORT'));
    dataPlane?.start();
    log.info({ node: identity.nodeId, discovery: discoveryAddress, ca: caAddress }, 'proxy agent started');
    firstCertificate.then(() => sds.push(), (error: Error) => log.error({ error: error.message }, 'no workload certificate'));
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    const drainMs = parseDuration(proxyConfig.terminationDrainDuration ?? '5s');
    log.info({ drainMs }, 'draining');
    await dataPlane?.drain(drainMs);
  } finally {
    release();
    certificates.stop();
    caTrust.stop();
    xdsTrust.stop();
    await dataPlane?.stop();
    await xdsProxy?.stop();
    await debugTap?.stop();
    await sds.stop();
    await status.close();
    io.stdout('proxy agent stopped\n');
    await logging.close();
  }
}


export function newProxyCommand(io: CliIo, deps: () => ProxyCommandDeps): Command {
  const command = new Command('proxy')
    .description('XDS proxy agent')
    .argument('[type]', 'sidecar or router', 'sidecar')
    .option('--concurrency <int>', 'number of worker threads to run', intFlag, 0)
    .option('--domain <string>', 'DNS domain suffix. If not provided uses ${POD_NAMESPACE}.svc.cluster.local', '')
    .option('--meshConfig <string>', 'File name for mesh configuration. If not specified, a default mesh will be used. This may be overridden by PROXY_CONFIG environment variable or proxy.mesh.io/config annotation.', './etc/mesh/config/mesh')
    .option('--outlierLogPath <string>', 'The log path for outlier detection', '')
    .option('--proxyComponentLogLevel <string>', 'The component log level used to start the Envoy proxy. Deprecated, use proxyLogLevel instead', '')
    .option('--proxyLogLevel <string>', 'The log level used to start the Envoy proxy (choose from {trace, debug, info, warning, error, critical, off}). Level may also include one or more scopes, such as \'info,misc:error,upstream:debug\'', 'warning,misc:error')
    .option('--serviceCluster <string>', 'Service cluster', 'mesh-proxy')
    .option('--stsPort <int>', 'HTTP Port on which to serve Security Token Service (STS). If zero, STS service will not be provided.', intFlag, 0)
    .option('--templateFile <string>', 'Go template bootstrap config', '')
    .option('--tokenManagerPlugin <string>', 'Token provider specific plugin name.', 'CloudTokenExchange')
    .action(async (type: string, flags: ProxyFlags) => {
      if (type !== 'sidecar' && type !== 'router') throw new UsageError(`proxy type must be sidecar or router, got "${type}"`);
      await runProxy(type, flags, deps(), io);
    });
  return command;
}
