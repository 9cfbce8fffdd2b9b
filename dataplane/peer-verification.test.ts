import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../runtime/index.js';
import { curl } from '../testing/curl.js';
import { certificateAuthority, intermediateAuthority, selfSignedCertificate, signedCertificate, type KeyAndCert } from '../testing/openssl.js';
import { CLUSTER_TYPE, LISTENER_TYPE } from '../xds/envoy/type-urls.js';
import { keyResources, newConfigState } from './config-state.js';
import { newEmbeddedDataPlane, type EmbeddedDataPlane } from './embedded-data-plane.js';
import type { SecretSet } from './sds-subscriber.js';
import { serverListeners, SERVER_PORT } from './testing/two-sidecars-fixture.js';

// The server sidecar's inbound mutual TLS verifies the client's chain against the ROOTCA bundle it
// holds at the moment of the handshake: a root dropped from the bundle stops being trusted for new
// connections; intermediates presented by the client link it to a root.
const POD = '127.62.1.2';
const APP = '127.62.2.2';
const SLEEP = 'URI:spiffe://cluster.local/ns/foo/sa/sleep';

let dir: string;
let backend: Server;
let plane: EmbeddedDataPlane;
let secrets: SecretSet;
let oldRoot: KeyAndCert;
let newRoot: KeyAndCert;
let fromOldRoot: KeyAndCert;
let fromNewRoot: KeyAndCert;
let throughIntermediate: { keyFile: string; certFile: string };
let leafWithoutIntermediate: KeyAndCert;
let forged: KeyAndCert;
let wrongIdentity: KeyAndCert;

const pem = (cert: KeyAndCert): string => readFileSync(cert.certFile, 'utf8');
const trust = (...roots: KeyAndCert[]): void => {
  secrets = { ...secrets, trustedCas: new Map([['ROOTCA', roots.map(pem).join('')]]) };
};
const call = (cert: { keyFile: string; certFile: string }): Promise<{ code: string }> =>
  curl(['-k', '--http1.1', '--cert', cert.certFile, '--key', cert.keyFile, `https://${POD}:${SERVER_PORT}/`]);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'peer-verification-'));
  oldRoot = await certificateAuthority(dir, 'old-root');
  newRoot = await certificateAuthority(dir, 'new-root');
  const intermediate = await intermediateAuthority(dir, 'intermediate', newRoot);
  fromOldRoot = await signedCertificate(dir, 'from-old-root', SLEEP, oldRoot);
  fromNewRoot = await signedCertificate(dir, 'from-new-root', SLEEP, newRoot);
  leafWithoutIntermediate = await signedCertificate(dir, 'under-intermediate', SLEEP, intermediate);
  const chainFile = join(dir, 'under-intermediate-chain.pem');
  writeFileSync(chainFile, pem(leafWithoutIntermediate) + pem(intermediate));
  throughIntermediate = { keyFile: leafWithoutIntermediate.keyFile, certFile: chainFile };
  forged = await selfSignedCertificate(dir, 'forged', SLEEP);
  wrongIdentity = await signedCertificate(dir, 'not-spiffe', 'DNS:sleep.example.com', newRoot);
  const serving = await signedCertificate(dir, 'httpbin', 'URI:spiffe://cluster.local/ns/bar/sa/httpbin', newRoot);

  backend = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => backend.listen(SERVER_PORT, APP, resolve));
  secrets = {
    certificates: new Map([['default', { certificateChain: pem(serving), privateKey: readFileSync(serving.keyFile, 'utf8') }]]),
    trustedCas: new Map(),
  };
  trust(oldRoot, newRoot);
  const state = newConfigState();
  for (const [type, resources] of [
    [LISTENER_TYPE, serverListeners('STRICT')],
    [CLUSTER_TYPE, [{ name: 'inbound|8000||', type: 'ORIGINAL_DST' }]],
  ] as const) {
    const applied = state.apply(type, '1', keyResources(type, resources as Record<string, unknown>[]));
    if (!applied.ok) throw new Error(applied.error);
  }
  plane = newEmbeddedDataPlane({
    state,
    secrets: () => secrets,
    podAddress: POD,
    inboundPorts: [SERVER_PORT],
    appAddress: APP,
    log: newNopLogger('dataplane'),
  });
  await plane.start();
});

afterAll(async () => {
  await plane?.stop();
  backend?.closeAllConnections();
  await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('inbound mutual TLS verifies the client chain against the current trust bundle', () => {
  test('both roots trusted: certificates of either are served', async () => {
    trust(oldRoot, newRoot);
    expect((await call(fromOldRoot)).code).toBe('200');
    expect((await call(fromNewRoot)).code).toBe('200');
  });

  test('the old root dropped: its certificates are refused on new connections, the new root still serves', async () => {
    trust(newRoot);
    expect((await call(fromOldRoot)).code).toBe('000');
    expect((await call(fromNewRoot)).code).toBe('200');
    expect(plane.stats.get('ssl.fail_verify_error')).toBeGreaterThan(0);
  });

  test('a chain through an intermediate the client presents is served; the leaf alone is refused', async () => {
    trust(newRoot);
    expect((await call(throughIntermediate)).code).toBe('200');
    expect((await call(leafWithoutIntermediate)).code).toBe('000');
  });

  test('a self-signed certificate is refused whatever identity it claims', async () => {
    trust(oldRoot, newRoot);
    expect((await call(forged)).code).toBe('000');
  });

  test('a trusted certificate without a SAN the chain accepts is refused (SAN check on top of the chain)', async () => {
    trust(newRoot);
    expect((await call(wrongIdentity)).code).toBe('000');
    expect(plane.stats.get('ssl.fail_verify_san')).toBeGreaterThan(0);
  });
});
