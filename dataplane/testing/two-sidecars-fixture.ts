/**
 * Test and benchmark support: a client sidecar and a server sidecar (embedded data planes on
 * their own loopback pod addresses) with a backend behind the server, configured by the daemon's
 * sidecar generators from a small mesh model. Not exported from index.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newNopLogger } from '../../runtime/index.js';
import { newTestAuthority } from '../../ca/testing/test-authority.js';
import {
  buildPushContext,
  CLUSTER_TYPE,
  LISTENER_TYPE,
  loadEnvoyProtos,
  ROUTE_TYPE,
  newInboundSecurityFilters,
  newMeshGenerators,
  type EnvoyProtos,
} from '../../xds/index.js';
import { buildCase, type CaseObject } from '../../xds/generators/testing/test-cases.js';
import { newConfigState, type ConfigState } from '../config-state.js';
import { newEmbeddedDataPlane, type EmbeddedDataPlane } from '../embedded-data-plane.js';
import type { TrafficRecordLimits } from '../traffic-record.js';
import type { SecretSet } from '../sds-subscriber.js';
import type { MeshConfig } from '../../crds/index.js';
import type { WorkloadFacts } from '../peer-metadata.js';
import { applyProxyConfig, generateProxyConfig } from './simulation-support.js';

export const SERVER_CLUSTER = 'outbound|8000||httpbin.bar.svc.cluster.local';
export const SERVER_PORT = 8000;
/** A second Service of the server workload, TCP on 9000 (tests put an echo behind it). */
export const ECHO_TCP_PORT = 9000;
export const ECHO_SERVICE = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'echo', namespace: 'bar' },
  spec: { clusterIP: '10.96.0.11', selector: { app: 'httpbin' }, ports: [{ name: 'tcp', port: ECHO_TCP_PORT, targetPort: ECHO_TCP_PORT }] },
} as const;

/** The workloads as their node metadata name them (the request metrics' source and destination labels). */
export const SERVER_WORKLOAD: WorkloadFacts = { name: 'httpbin', namespace: 'bar', app: 'httpbin', version: 'v1', cluster: 'Kubernetes' };
export const CLIENT_WORKLOAD: WorkloadFacts = { name: 'sleep', namespace: 'foo', app: 'sleep', version: 'unknown', cluster: 'Kubernetes' };

export type ServerMode = 'STRICT' | 'PERMISSIVE';

/** The pod addresses of a fixture: loopback addresses distinguished by `subnet`. */
function podsOf(subnet: number): { serverPod: string; serverApp: string; clientPod: string } {
  return { serverPod: `127.${subnet}.1.2`, serverApp: `127.${subnet}.2.2`, clientPod: `127.${subnet}.1.1` };
}

/**
 * The mesh: `httpbin.bar:8000` served by one pod (service account httpbin) and a `sleep` pod in
 * foo, both with sidecars and mutual TLS (`tlsMode: mesh`), bar's PeerAuthentication in `mode`.
 */
function meshObjects(subnet: number, mode: ServerMode, policies: readonly object[]): CaseObject[] {
  const { serverPod, clientPod } = podsOf(subnet);
  const pod = (name: string, namespace: string, app: string, ip: string, ports: object[]): CaseObject => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, labels: { app, 'security.mesh.io/tlsMode': 'mesh' }, annotations: { 'sidecar.mesh.io/status': 'injected' } },
    spec: { serviceAccountName: app, containers: [{ name: app, ports }] },
    status: { podIP: ip },
  });
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'httpbin', namespace: 'bar' },
      spec: { clusterIP: '10.96.0.10', selector: { app: 'httpbin' }, ports: [{ name: 'http', port: SERVER_PORT, targetPort: SERVER_PORT }] },
    },
    pod('httpbin-1', 'bar', 'httpbin', serverPod, [{ containerPort: SERVER_PORT }]),
    pod('sleep-1', 'foo', 'sleep', clientPod, []),
    { apiVersion: 'security.mesh.io/v1beta1', kind: 'PeerAuthentication', metadata: { name: 'default', namespace: 'bar' }, spec: { mtls: { mode } } },
    ...(policies as CaseObject[]),
  ];
}

const proxyNode = (ip: string, pod: string, namespace: string, serviceAccount: string): CaseObject => ({
  kind: 'ProxyNode',
  id: `sidecar~${ip}~${pod}.${namespace}~${namespace}.svc.cluster.local`,
  metadata: { NAMESPACE: namespace, SERVICE_ACCOUNT: serviceAccount },
});

export type SidecarSide = 'server' | 'client';

/** What the daemon is told besides the policies: mesh config fields and PILOT_SKIP_VALIDATE_TRUST_DOMAIN. */
export interface DaemonConfig {
  readonly meshConfig?: Partial<MeshConfig>;
  readonly skipValidateTrustDomain?: boolean;
  /** MESH_DEFAULT_REQUEST_TIMEOUT. */
  readonly defaultRequestTimeoutMs?: number;
  /** PILOT_HTTP10. */
  readonly acceptHttp10?: boolean;
  /** PILOT_SIDECAR_USE_REMOTE_ADDRESS. */
  readonly sidecarUseRemoteAddress?: boolean;
  /** PILOT_ENABLE_INBOUND_PASSTHROUGH. */
  readonly inboundPassthrough?: boolean;
  /** PILOT_HTTP_DELAYED_CLOSE_TIMEOUT. */
  readonly delayedCloseTimeoutMs?: number;
  /** PILOT_JWT_ENABLE_REMOTE_JWKS. */
  readonly remoteJwks?: boolean;
}

/** The config the daemon's sidecar generators give one side, as it travels. */
function generatedConfig(
  protos: EnvoyProtos,
  subnet: number,
  mode: ServerMode,
  policies: readonly object[],
  side: SidecarSide,
  daemon: DaemonConfig = {},
): Map<string, Record<string, unknown>[]> {
  const { serverPod, clientPod } = podsOf(subnet);
  // Policies carry their JWKS inline: the daemon fetches nothing (a `jwksUri` it would fetch gets an empty set).
  const generators = newMeshGenerators({
    securityFilters: newInboundSecurityFilters({
      jwks: { keySetFor: (rule) => rule.jwks ?? '{"keys":[]}' },
      ...(daemon.remoteJwks !== undefined ? { remoteJwks: daemon.remoteJwks } : {}),
    }),
    skipValidateTrustDomain: daemon.skipValidateTrustDomain ?? false,
    ...(daemon.defaultRequestTimeoutMs !== undefined ? { defaultRequestTimeoutMs: daemon.defaultRequestTimeoutMs } : {}),
    ...(daemon.acceptHttp10 !== undefined ? { acceptHttp10: daemon.acceptHttp10 } : {}),
    ...(daemon.sidecarUseRemoteAddress !== undefined ? { sidecarUseRemoteAddress: daemon.sidecarUseRemoteAddress } : {}),
    ...(daemon.inboundPassthrough !== undefined ? { inboundPassthrough: daemon.inboundPassthrough } : {}),
    ...(daemon.delayedCloseTimeoutMs !== undefined ? { delayedCloseTimeoutMs: daemon.delayedCloseTimeoutMs } : {}),
  });
  const node = side === 'server' ? proxyNode(serverPod, 'httpbin-1', 'bar', 'httpbin') : proxyNode(clientPod, 'sleep-1', 'foo', 'sleep');
  const { model, proxy } = buildCase([...meshObjects(subnet, mode, policies), node], 'the two-sidecar mesh');
  if (daemon.meshConfig) model.setMeshConfig({ ...model.meshConfig(), ...daemon.meshConfig });
  return generateProxyConfig(protos, generators, proxy, buildPushContext(model));
}

/** The Envoy protos, loaded once per test file: half a second or more each time, and only read by the generators. */
let protos: EnvoyProtos | undefined;
const envoyProtos = (): EnvoyProtos => (protos ??= loadEnvoyProtos());

/**
 * The server sidecar's listeners as generated: `virtualInbound` with a mutual TLS chain on port
 * 8000 (and a plain one in PERMISSIVE), carrying the HTTP filters of `policies`
 * (RequestAuthentication, AuthorizationPolicy objects in bar), and the outbound ones.
 */
export function serverListeners(mode: ServerMode, policies: readonly object[] = [], daemon: DaemonConfig = {}): Record<string, unknown>[] {
  // A sidecar's listeners do not name its pod address: any subnet gives the same.
  return generatedConfig(envoyProtos(), 0, mode, policies, 'server', daemon).get(LISTENER_TYPE) ?? [];
}

/** The server sidecar's clusters as generated (its inbound ones name no pod address either). */
export function serverClusters(mode: ServerMode, policies: readonly object[] = [], daemon: DaemonConfig = {}): Record<string, unknown>[] {
  return generatedConfig(loadEnvoyProtos(), 0, mode, policies, 'server', daemon).get(CLUSTER_TYPE) ?? [];
}

/** The client sidecar's listeners as generated (they do not name pod addresses either). */
export function clientListeners(mode: ServerMode, policies: readonly object[] = [], daemon: DaemonConfig = {}): Record<string, unknown>[] {
  return generatedConfig(loadEnvoyProtos(), 0, mode, policies, 'client', daemon).get(LISTENER_TYPE) ?? [];
}

/** The client sidecar's route configurations as generated (they do not name pod addresses either). */
export function clientRoutes(mode: ServerMode, policies: readonly object[] = [], daemon: DaemonConfig = {}): Record<string, unknown>[] {
  return generatedConfig(envoyProtos(), 0, mode, policies, 'client', daemon).get(ROUTE_TYPE) ?? [];
}

/**
 * A RequestAuthentication of `issuer` (its JWKS inline) and an AuthorizationPolicy allowing the
 * sleep identity with a token of that issuer, both for httpbin: jwt_authn and RBAC on the server.
 */
export function jwtPolicies(issuer: string, jwks: string): object[] {
  const selector = { matchLabels: { app: 'httpbin' } };
  return [
    {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'RequestAuthentication',
      metadata: { name: 'jwt', namespace: 'bar' },
      spec: { selector, jwtRules: [{ issuer, jwks }] },
    },
    {
      apiVersion: 'security.mesh.io/v1beta1',
      kind: 'AuthorizationPolicy',
      metadata: { name: 'require-jwt', namespace: 'bar' },
      spec: {
        selector,
        action: 'ALLOW',
        rules: [
          { from: [{ source: { principals: ['cluster.local/ns/foo/sa/sleep'], requestPrincipals: [`${issuer}/*`] } }], to: [{ operation: { paths: ['/*'] } }] },
        ],
      },
    },
  ];
}

/** The workload certificates of the mesh: issued by one test authority, by SPIFFE identity. */
export type MeshSecrets = (identity: string) => SecretSet;

export async function newMeshSecrets(): Promise<MeshSecrets> {
  const authority = await newTestAuthority('cluster.local');
  return (identity) => {
    const { key, certPem } = authority.workload(identity);
    return {
      certificates: new Map([['default', { certificateChain: certPem, privateKey: key.export({ format: 'pem', type: 'pkcs8' }).toString() }]]),
      trustedCas: new Map([['ROOTCA', authority.rootPem]]),
    };
  };
}

export const SIDECAR_IDENTITIES: Readonly<Record<SidecarSide, string>> = {
  server: 'spiffe://cluster.local/ns/bar/sa/httpbin',
  client: 'spiffe://cluster.local/ns/foo/sa/sleep',
};

export interface MeshAddresses {
  /** `http://<server app>:8000`: the backend without sidecars. */
  readonly directUrl: string;
  readonly serverPod: string;
  readonly clientPod: string;
}

export function meshAddresses(subnet: number): MeshAddresses {
  const { serverPod, serverApp, clientPod } = podsOf(subnet);
  return { directUrl: `http://${serverApp}:${SERVER_PORT}`, serverPod, clientPod };
}

/** The app behind the server sidecar: echoes the request's headers and body as JSON; `/delay/<ms>` answers late, `/status/<code>` with that code. */
export async function startBackend(subnet: number): Promise<{ close(): Promise<void> }> {
  const backend: Server = createServer(async (req, res) => {
    // `/delay/<ms>` answers late: a request in flight while the proxies drain.
    const delay = /^\/delay\/(\d+)$/.exec(req.url ?? '')?.[1];
    if (delay) await new Promise((resolve) => setTimeout(resolve, Number(delay)));
    // `/status/<code>` answers with that code (the request metrics' 4xx and 5xx).
    const status = Number(/^\/status\/(\d{3})$/.exec(req.url ?? '')?.[1] ?? 200);
    // The request's body comes back as text (what reached the app after the proxies).
    const chunks: Buffer[] = [];
    const hasBody = (req.headers['content-length'] ?? '0') !== '0' || req.headers['transfer-encoding'] !== undefined;
    if (hasBody) for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.stringify({ headers: req.headers, url: req.url, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  // Idle keep-alive connections stay (Node closes them after 5 s): a client reusing one as the
  // server closes it gets a reset it could not have avoided (the benchmark's direct path pauses).
  backend.keepAliveTimeout = 3_600_000;
  await new Promise<void>((resolve) => backend.listen(SERVER_PORT, podsOf(subnet).serverApp, resolve));
  return {
    async close() {
      backend.closeAllConnections();
      await new Promise<void>((resolve) => backend.close(() => resolve()));
    },
  };
}

export interface SidecarOptions {
  /** Loopback octet pair distinguishing fixtures that run in parallel. */
  readonly subnet: number;
  readonly mode?: ServerMode;
  /** Policies of the server workload (RequestAuthentication, AuthorizationPolicy objects), in bar. */
  readonly serverPolicies?: readonly object[];
  /** Ports the server sidecar captures on its pod address; default 8000 (add the ports of extra Services given as policies). */
  readonly serverPorts?: readonly number[];
  /** Both sidecars keep a traffic record with these limits. */
  readonly trafficRecord?: TrafficRecordLimits;
}

export interface Sidecar {
  readonly state: ConfigState;
  readonly plane: EmbeddedDataPlane;
}

/** One side's sidecar with the config the generators give it, started; the client's outbound port is free, found in `plane.addresses()`. */
export async function startSidecar(side: SidecarSide, options: SidecarOptions, secrets: SecretSet): Promise<Sidecar> {
  const { serverPod, serverApp, clientPod } = podsOf(options.subnet);
  const config = generatedConfig(envoyProtos(), options.subnet, options.mode ?? 'STRICT', options.serverPolicies ?? [], side);
  if (side === 'client' && !config.get(CLUSTER_TYPE)?.some((cluster) => cluster['name'] === SERVER_CLUSTER))
    throw new Error(`the client sidecar has no cluster ${SERVER_CLUSTER}`);
  const state = newConfigState();
  applyProxyConfig(state, config, '1');
  const common = { state, secrets: () => secrets, log: newNopLogger('dataplane'), ...(options.trafficRecord ? { trafficRecord: options.trafficRecord } : {}) };
  const plane =
    side === 'server'
      ? newEmbeddedDataPlane({
          ...common,
          podAddress: serverPod,
          inboundPorts: options.serverPorts ?? [SERVER_PORT],
          appAddress: serverApp,
          workload: SERVER_WORKLOAD,
          nodeId: `sidecar~${serverPod}~httpbin-1.bar~bar.svc.cluster.local`,
        })
      : newEmbeddedDataPlane({
          ...common,
          podAddress: clientPod,
          outboundPort: 0,
          workload: CLIENT_WORKLOAD,
          nodeId: `sidecar~${clientPod}~sleep-1.foo~foo.svc.cluster.local`,
        });
  await plane.start();
  return { state, plane };
}

/** `http://<client pod>:<port>` of a started client sidecar's outbound listener. */
export function proxyUrlOf(client: Sidecar): string {
  const outbound = client.plane.addresses().get('outbound') as AddressInfo;
  return `http://${outbound.address}:${outbound.port}`;
}

export interface TwoSidecars {
  readonly serverState: ConfigState;
  readonly serverPlane: EmbeddedDataPlane;
  readonly clientState: ConfigState;
  readonly clientPlane: EmbeddedDataPlane;
  /** `http://<client pod>:<outbound port>`: the client sidecar's HTTP proxy. */
  readonly proxyUrl: string;
  /** `http://<server app>:8000`: the backend without sidecars. */
  readonly directUrl: string;
  readonly serverPod: string;
  readonly clientPod: string;
  /** Issues a workload certificate's secrets (for SAN tests). */
  secretsFor(identity: string): SecretSet;
  close(): Promise<void>;
}

export type TwoSidecarsOptions = SidecarOptions;

export async function startTwoSidecars(options: TwoSidecarsOptions): Promise<TwoSidecars> {
  const secretsFor = await newMeshSecrets();
  const backend = await startBackend(options.subnet);
  const [server, client] = await Promise.all([
    startSidecar('server', options, secretsFor(SIDECAR_IDENTITIES.server)),
    startSidecar('client', options, secretsFor(SIDECAR_IDENTITIES.client)),
  ]);
  const { directUrl, serverPod, clientPod } = meshAddresses(options.subnet);
  return {
    serverState: server.state,
    serverPlane: server.plane,
    clientState: client.state,
    clientPlane: client.plane,
    proxyUrl: proxyUrlOf(client),
    directUrl,
    serverPod,
    clientPod,
    secretsFor,
    async close() {
      await Promise.all([server.plane.stop(), client.plane.stop()]);
      await backend.close();
    },
  };
}
