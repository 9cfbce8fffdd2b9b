import { readFile } from 'node:fs/promises';
import { errorMessage, runnableOf, type Logger, type MeshMetrics, type Runnable } from '../../runtime/index.js';
import { NAME_TABLE_TYPE, type EnvoyProtos } from '../../xds/envoy/index.js';
import { AGENT_DNS_PORT } from '../iptables/constants.js';
import type { AgentSubscription } from '../xds-proxy/agent-subscriptions.js';
import { newDnsProxy, type DnsProxy } from './dns-proxy.js';
import { buildLookupTable, type NameTableMessage } from './lookup-table.js';
import { parseResolverConfig, type ResolverConfig } from './resolv-conf.js';

const FORWARD_TIMEOUT_MS = 5_000;

export interface AgentDnsOptions {
  readonly protos: () => EnvoyProtos;
  /** The pod's resolv.conf: upstreams and search domains. */
  readonly resolvConfPath: string;
  readonly instanceIp: string;
  readonly proxyNamespace: string;
  /** `<ns>.svc.<cluster domain>`. */
  readonly proxyDomain: string;
  /** The port to answer on: 15053 unless a test picks another. */
  readonly port?: number;
  readonly log: Logger;
  readonly metrics: MeshMetrics<'pilot-agent'>;
}

/** The DNS proxy, its NDS subscription on the proxy's xDS stream, and its runnable. */
export interface AgentDns {
  readonly proxy: DnsProxy;
  readonly subscription: AgentSubscription;
  readonly runnable: Runnable;
}

/**
 * MESH_META_DNS_CAPTURE: the agent answers DNS on :15053 from the daemon's name table. It binds
 * the pod's loopback, where the capture rules redirect port 53 (`127.0.0.1`); a pod whose own
 * address is a loopback one (the local mesh, every pod on one host) binds that address instead.
 */
export function newAgentDns(options: AgentDnsOptions): AgentDns {
  const { log } = options;
  let resolver: ResolverConfig = { nameServers: [], search: [] };
  const host = options.instanceIp.startsWith('127.') || options.instanceIp === '::1' ? options.instanceIp : '127.0.0.1';
  const proxy = newDnsProxy({
    listen: { host, port: options.port ?? AGENT_DNS_PORT },
    upstreams: () => resolver.nameServers.map((server) => ({ host: server, port: 53 })),
    forwardTimeoutMs: FORWARD_TIMEOUT_MS,
    log,
    metrics: options.metrics,
  });
  const nameTable = () => options.protos().lookupType('mesh.networking.nds.v1.NameTable');
  const subscription: AgentSubscription = {
    typeUrl: NAME_TABLE_TYPE,
    onResources(resources) {
      const type = nameTable();
      const message = (resources[0] ? type.toObject(type.decode(resources[0].value), { arrays: true }) : {}) as NameTableMessage;
      proxy.update(buildLookupTable(message, { proxyNamespace: options.proxyNamespace, proxyDomain: options.proxyDomain, searchDomains: resolver.search }));
      return undefined;
    },
  };
  const runnable = runnableOf(
    'dns-proxy',
    async () => {
      resolver = await readResolverConfig(options.resolvConfPath, log);
      await proxy.start();
      return () => proxy.stop();
    },
    { group: 'httpServer' },
  );
  return { proxy, subscription, runnable };
}

async function readResolverConfig(path: string, log: Logger): Promise<ResolverConfig> {
  try {
    const config = parseResolverConfig(await readFile(path, 'utf8'));
    log.debug({ servers: config.nameServers, search: config.search }, 'initialized DNS');
    return config;
  } catch (error) {
    log.warn({ path, error: errorMessage(error) }, 'cannot read resolv.conf: names the mesh does not know get SERVFAIL');
    return { nameServers: [], search: [] };
  }
}
