import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { curl } from '../testing/curl.js';
import { certificateAuthority, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { CLUSTER_TYPE, LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources, newConfigState, type ConfigState } from './config-state.js';
import { newEmbeddedDataPlane, type EmbeddedDataPlane } from './embedded-data-plane.js';
import { serverListeners, SERVER_PORT, type DaemonConfig } from './testing/two-sidecars-fixture.js';

// Authorization on identities an attacker shapes: client certificates signed by a root the server
// sidecar trusts, whose URI SANs look like what a policy allows (a local namespace named like an
// allowed trust domain, a foreign trust domain containing an allowed one, segments repeated after
// the trust domain, regex characters). Two server sidecars: one with the inbound handshake's
// trust-domain check (the default), one with it skipped (PILOT_SKIP_VALIDATE_TRUST_DOMAIN).
const CHECKED = { pod: '127.64.1.2', app: '127.64.2.2' };
const SKIPPED = { pod: '127.64.1.3', app: '127.64.2.3' };

const IDENTITIES = {
  localNamespaceLikeTd: 'spiffe://cluster.local/ns/my-td/sa/x',
  foreignTd: 'spiffe://foo-td/ns/a/sa/b',
  foreignWithLocalLookingNamespace: 'spiffe://evil/ns/my-td/sa/x',
  td1: 'spiffe://td1/ns/foo/sa/sleep',
  td1AsPrefix: 'spiffe://td1.evil/ns/foo/sa/sleep',
  td1AsSuffix: 'spiffe://evil-td1/ns/foo/sa/sleep',
  tdDotLookalike: 'spiffe://tdx1/ns/foo/sa/sleep',
  segmentsAfterLocalTd: 'spiffe://cluster.local/ns/x-td/ns/foo/sa/sleep',
  sleepInForeignTd: 'spiffe://foo-td/ns/foo/sa/sleep',
  namespaceInLaterSegment: 'spiffe://evil/ns/x/sa/y-prod/z',
  namespaceMatching: 'spiffe://evil/ns/team-prod/sa/y',
  localSleep: 'spiffe://cluster.local/ns/foo/sa/sleep',
} as const;
type Identity = keyof typeof IDENTITIES;

let dir: string;
let root: KeyAndCert;
const certs = new Map<Identity, KeyAndCert>();
const backends: Server[] = [];
const planes: { state: ConfigState; plane: EmbeddedDataPlane; pod: string; skip: boolean }[] = [];
let version = 0;

function policy(action: 'ALLOW' | 'DENY', source: Record<string, string[]>): object {
  return {
    apiVersion: 'security.mesh.io/v1beta1',
    kind: 'AuthorizationPolicy',
    metadata: { name: `${action.toLowerCase()}-by-source`, namespace: 'bar' },
    spec: { selector: { matchLabels: { app: 'httpbin' } }, action, rules: [{ from: [{ source }] }] },
  };
}

/** Configures both sidecars with the policies (and mesh config), as the daemon's generators would. */
function configure(policies: readonly object[], meshConfig: DaemonConfig['meshConfig'] = {}): void {
  version += 1;
  for (const { state, skip } of planes) {
    const listeners = serverListeners('STRICT', policies, { meshConfig, skipValidateTrustDomain: skip });
    const applied = state.apply(LISTENER_TYPE, String(version), keyResources(LISTENER_TYPE, listeners));
    if (!applied.ok) throw new Error(applied.error);
  }
}

/** The HTTP status a client with this identity gets; `000` when the handshake is refused. */
async function statusAs(identity: Identity, sidecar: 'checked' | 'skipped'): Promise<string> {
  const cert = certs.get(identity) as KeyAndCert;
  const pod = sidecar === 'checked' ? CHECKED.pod : SKIPPED.pod;
  return (await curl(['-k', '--http1.1', '--cert', cert.certFile, '--key', cert.keyFile, `https://${pod}:${SERVER_PORT}/`])).code;
}

async function startServerSidecar(addresses: { pod: string; app: string }, skip: boolean, serving: KeyAndCert): Promise<void> {
  const backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => backend.listen(SERVER_PORT, addresses.app, resolve));
  backends.push(backend);
  const secrets = {
    certificates: new Map([['default', { certificateChain: readFileSync(serving.certFile, 'utf8'), privateKey: readFileSync(serving.keyFile, 'utf8') }]]),
    trustedCas: new Map([['ROOTCA', readFileSync(root.certFile, 'utf8')]]),
  };
  const state = newConfigState();
  const cluster = state.apply(CLUSTER_TYPE, '1', keyResources(CLUSTER_TYPE, [{ name: 'inbound|8000||', type: 'ORIGINAL_DST' }]));
  if (!cluster.ok) throw new Error(cluster.error);
  const plane = newEmbeddedDataPlane({
    state,
    secrets: () => secrets,
    podAddress: addresses.pod,
    inboundPorts: [SERVER_PORT],
    appAddress: addresses.app,
    log: newNopLogger('dataplane'),
  });
  planes.push({ state, plane, pod: addresses.pod, skip });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trust-domain-policies-'));
  root = await certificateAuthority(dir, 'root');
  // One at a time: openssl keeps the root's serial number in a file.
  for (const [name, uri] of Object.entries(IDENTITIES) as [Identity, string][]) certs.set(name, await signedCertificate(dir, name, `URI:${uri}`, root));
  const serving = await signedCertificate(dir, 'httpbin', 'URI:spiffe://cluster.local/ns/bar/sa/httpbin', root);
  await startServerSidecar(CHECKED, false, serving);
  await startServerSidecar(SKIPPED, true, serving);
  configure([]);
  await Promise.all(planes.map(({ plane }) => plane.start()));
});

afterAll(async () => {
  await Promise.all(planes.map(({ plane }) => plane.stop()));
  for (const backend of backends) {
    backend.closeAllConnections();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('trust domains in AuthorizationPolicy, through the data plane', () => {
  test('without a policy: local identities pass; a foreign trust domain only when the handshake check is skipped', async () => {
    expect(await statusAs('localNamespaceLikeTd', 'checked')).toBe('200');
    expect(await statusAs('foreignTd', 'checked')).toBe('000');
    expect(await statusAs('foreignTd', 'skipped')).toBe('200');
  });

  test('ALLOW trustDomains ["*-td"]: a local namespace named like it is denied; the foreign trust domain passes where it is accepted', async () => {
    configure([policy('ALLOW', { trustDomains: ['*-td'] })]);
    expect(await statusAs('localNamespaceLikeTd', 'checked')).toBe('403');
    expect(await statusAs('localNamespaceLikeTd', 'skipped')).toBe('403');
    expect(await statusAs('foreignWithLocalLookingNamespace', 'skipped')).toBe('403');
    expect(await statusAs('foreignTd', 'checked')).toBe('000');
    expect(await statusAs('foreignTd', 'skipped')).toBe('200');
  });

  test('ALLOW notTrustDomains ["*-td"]: the local namespace named like it passes, the foreign trust domain is denied', async () => {
    configure([policy('ALLOW', { notTrustDomains: ['*-td'] })]);
    expect(await statusAs('localNamespaceLikeTd', 'checked')).toBe('200');
    expect(await statusAs('foreignTd', 'skipped')).toBe('403');
  });

  test('DENY trustDomains ["*-td"] denies the foreign trust domain only', async () => {
    configure([policy('DENY', { trustDomains: ['*-td'] })]);
    expect(await statusAs('localNamespaceLikeTd', 'checked')).toBe('200');
    expect(await statusAs('foreignTd', 'skipped')).toBe('403');
  });

  test('ALLOW trustDomains ["td1"]: foreign trust domains that contain it are denied', async () => {
    configure([policy('ALLOW', { trustDomains: ['td1'] })]);
    expect(await statusAs('td1', 'skipped')).toBe('200');
    expect(await statusAs('td1AsPrefix', 'skipped')).toBe('403');
    expect(await statusAs('td1AsSuffix', 'skipped')).toBe('403');
  });

  test('a regex character in a trust domain is itself: "td.1" does not match tdx1', async () => {
    configure([policy('ALLOW', { trustDomains: ['td.1'] })]);
    expect(await statusAs('tdDotLookalike', 'skipped')).toBe('403');
  });

  test('ALLOW principals ["*-td/ns/foo/sa/sleep"]: the wildcard covers the trust domain, not the segments after it', async () => {
    configure([policy('ALLOW', { principals: ['*-td/ns/foo/sa/sleep'] })]);
    expect(await statusAs('segmentsAfterLocalTd', 'checked')).toBe('403');
    expect(await statusAs('segmentsAfterLocalTd', 'skipped')).toBe('403');
    expect(await statusAs('sleepInForeignTd', 'skipped')).toBe('200');
  });

  test('ALLOW namespaces ["*-prod"]: the wildcard stays in the namespace segment', async () => {
    configure([policy('ALLOW', { namespaces: ['*-prod'] })]);
    expect(await statusAs('namespaceInLaterSegment', 'skipped')).toBe('403');
    expect(await statusAs('namespaceMatching', 'skipped')).toBe('200');
  });

  test('aliases: with trustDomain td1 and alias cluster.local, trustDomains ["cluster.local"] also means td1, and the other way round', async () => {
    const meshConfig = { trustDomain: 'td1', trustDomainAliases: ['cluster.local'] };
    configure([policy('ALLOW', { trustDomains: ['cluster.local'] })], meshConfig);
    expect(await statusAs('td1', 'checked')).toBe('200');
    expect(await statusAs('localSleep', 'checked')).toBe('200');
    expect(await statusAs('td1AsPrefix', 'skipped')).toBe('403');
    configure([policy('ALLOW', { trustDomains: ['td1'] })], meshConfig);
    expect(await statusAs('localSleep', 'checked')).toBe('200');
    configure([policy('ALLOW', { notTrustDomains: ['td1'] })], meshConfig);
    expect(await statusAs('localSleep', 'checked')).toBe('403');
    expect(await statusAs('foreignTd', 'skipped')).toBe('200');
  });
});
