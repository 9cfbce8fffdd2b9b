import { readFileSync } from 'node:fs';
import { credentials, type ChannelCredentials, type ChannelOptions } from '@grpc/grpc-js';
import type { Logger } from '../runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import { jsonToStruct, type JsonValue } from '../xds/envoy/index.js';
import { newAdminServer, type AdminServer } from './admin-server.js';
import { newAdsSecrets } from './ads-secrets.js';
import { readBootstrap } from './bootstrap-view.js';
import { newConfigState } from './config-state.js';
import { newEmbeddedDataPlane } from './embedded-data-plane.js';
import { processMemoryStats } from './data-plane-stats.js';
import { workloadFromNodeMetadata } from './peer-metadata.js';
import { newSdsSubscriber, type SdsSubscriber } from './sds-subscriber.js';
import { newEnvoyLoggers, type EnvoyLevel } from './admin-loggers.js';
import { newXdsSubscriber, type XdsSubscriber } from './xds-subscriber.js';
import { errorMessage } from '../runtime/index.js';
import { trafficRecordLimitsOf } from './traffic-record-limits.js';

/** Node metadata naming the app's private address in local mode (where captured inbound traffic is delivered). */
export const APP_ADDRESS_METADATA = 'APP_ADDRESS';
/** The outbound capture port (mesh config `proxyListenPort`). */
export const OUTBOUND_CAPTURE_PORT = 15001;

export interface EmbeddedRunnerOptions {
  protos: EnvoyProtos;
  /** The Envoy bootstrap JSON the agent wrote. */
  bootstrap: Record<string, unknown>;
  log: Logger;
  /** `-l`: the level every logger starts at (`/logging` lists and changes them). */
  logLevel?: string;
  /** Makes the data plane log at this level: the most verbose any logger of `/logging` asks for. */
  setLogLevel?: (level: EnvoyLevel) => void;
  /** `/quitquitquit`. */
  quit?: () => void;
}

/**
 * The embedded data plane as `mesh-dataplane` runs it in place of Envoy: same bootstrap, same xDS
 * and SDS; readiness and draining go through its admin API, as the agent asks Envoy.
 */
export interface EmbeddedRunner {
  start(): Promise<void>;
  stop(): Promise<void>;
}

function firstInstanceIp(metadata: Record<string, unknown>): string {
  const ips = metadata['INSTANCE_IPS'];
  const first = typeof ips === 'string' ? ips.split(',')[0]?.trim() : undefined;
  return first && first !== '' ? first : '127.0.0.1';
}

export function newEmbeddedRunner(options: EmbeddedRunnerOptions): EmbeddedRunner {
  const view = readBootstrap(options.bootstrap);
  const { log, protos } = options;
  const node = { ...view.node, metadata: jsonToStruct(view.node.metadata as Record<string, JsonValue>) };
  const state = newConfigState();
  const xdsTls = view.xdsTls;
  // Straight to the daemon, the ADS stream waits for the client certificate SDS delivers.
  const sds: SdsSubscriber | undefined = view.sdsTarget
    ? newSdsSubscriber({
        protos,
        target: view.sdsTarget,
        credentials: credentials.createInsecure(),
        node,
        names: ['default', 'ROOTCA'],
        log,
        onChange: () => openTlsXds(),
      })
    : undefined;
  // Gateways' credentials (`kubernetes://…`) come over the ADS stream, merged with the agent's.
  const adsSecrets = newAdsSecrets();
  const secrets = () => adsSecrets.merged(sds?.current());
  const isRouter = view.node.id.startsWith('router~');
  const appAddress = view.node.metadata[APP_ADDRESS_METADATA];
  const dataPlane = newEmbeddedDataPlane({
    state,
    secrets,
    podAddress: firstInstanceIp(view.node.metadata),
    ...(isRouter ? { bindListeners: true } : { captureInboundFromConfig: true, outboundPort: OUTBOUND_CAPTURE_PORT }),
    ...(typeof appAddress === 'string' && appAddress !== '' ? { appAddress } : {}),
    log,
    workload: workloadFromNodeMetadata(view.node.metadata),
    nodeId: view.node.id,
    protos,
    trafficRecord: trafficRecordLimitsOf(view.node.metadata, (message) => log.warn(message)),
  });
  dataPlane.stats.attach(processMemoryStats());
  const newXds = (channelCredentials: ChannelCredentials, channelOptions: ChannelOptions = {}): XdsSubscriber =>
    newXdsSubscriber({
      protos,
      target: view.xdsTarget,
      credentials: channelCredentials,
      channelOptions,
      node,
      state,
      log,
      stats: dataPlane.stats,
      adsSecrets,
      delta: view.delta,
    });
  let xds: XdsSubscriber | undefined = xdsTls ? undefined : newXds(credentials.createInsecure());
  let started = false;
  let stopped = false;
  const openTlsXds = (): void => {
    if (stopped) return;
    const certificate = xdsTls ? sds?.current().certificates.get(xdsTls.certificateSecret) : undefined;
    if (!xdsTls || xds || !certificate) return;
    let roots: Buffer;
    try {
      roots = readFileSync(xdsTls.caFile);
    } catch (error) {
      log.error({ file: xdsTls.caFile, error: errorMessage(error) }, 'cannot read the CA that verifies the control plane');
      return;
    }
    const channelCredentials = credentials.createSsl(roots, Buffer.from(certificate.privateKey), Buffer.from(certificate.certificateChain));
    xds = newXds(channelCredentials, xdsTls.serverName ? { 'grpc.ssl_target_name_override': xdsTls.serverName } : {});
    if (started) xds.start();
  };
  const adminOptions = {
    state,
    stats: dataPlane.stats,
    isReady: () => xds?.isSynced() ?? false,
    addresses: () => dataPlane.addresses(),
    bootstrap: options.bootstrap,
    secrets,
    loggers: newEnvoyLoggers(options.logLevel ?? 'warning', (level) => options.setLogLevel?.(level)),
    ...(options.quit ? { quit: options.quit } : {}),
    drain: (inboundOnly: boolean) => void dataPlane.drain(0, { inboundOnly }),
    recentRequests: () => dataPlane.recentRequests(),
  };
  const admins: AdminServer[] = [];
  return {
    async start() {
      started = true;
      sds?.start();
      xds?.start();
      await dataPlane.start();
      if (view.admin) {
        const admin = newAdminServer(adminOptions);
        await admin.listen(view.admin.address, view.admin.port);
        admins.push(admin);
      }
      if (view.prometheus) {
        const prometheus = newAdminServer(adminOptions, 'prometheus');
        await prometheus.listen(view.prometheus.address, view.prometheus.port);
        admins.push(prometheus);
      }
    },
    async stop() {
      stopped = true;
      xds?.close();
      sds?.close();
      await dataPlane.stop();
      await Promise.all(admins.map((admin) => admin.close()));
    },
  };
}
