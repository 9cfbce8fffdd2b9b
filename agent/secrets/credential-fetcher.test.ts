import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { UnsecuredJWT } from 'jose';
import { removeDir, tempDir } from '../../ca/testing/test-support.js';
import { credentialFetcher } from './credential-fetcher.js';

// The metadata server of a cloud VM, on loopback: it answers the identity token for the audience
// asked, only with the `Metadata-Flavor: Google` header.
let server: Server;
let base: string;
let dir: string;
const requests: IncomingMessage[] = [];
const lifetimeSeconds = 3600;
let failWith: number | undefined;

beforeAll(async () => {
  dir = await tempDir('credential-fetcher-');
  server = createServer((req, res) => {
    requests.push(req);
    const url = new URL(req.url ?? '/', 'http://metadata');
    if (failWith) return void res.writeHead(failWith).end('quota exceeded');
    if (req.headers['metadata-flavor'] !== 'Google') return void res.writeHead(403).end('missing Metadata-Flavor');
    if (url.pathname !== '/computeMetadata/v1/instance/service-accounts/default/identity') return void res.writeHead(404).end();
    const token = new UnsecuredJWT({ aud: url.searchParams.get('audience') ?? '', format: url.searchParams.get('format'), n: requests.length })
      .setExpirationTime(Math.floor(Date.now() / 1000) + lifetimeSeconds)
      .encode();
    res.end(token);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await removeDir(dir);
});

const claims = (token: string): Record<string, unknown> =>
  JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as Record<string, unknown>;
const gce = (now?: () => number) =>
  credentialFetcher({
    type: 'GoogleComputeEngine',
    identityProvider: 'GoogleComputeEngine',
    audience: 'cluster.local',
    tokenPath: '/nonexistent',
    metadataServer: base,
    ...(now ? { now } : {}),
  });

describe('credential fetchers', () => {
  test('without a type, the projected token file, read fresh each time', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 'first\n');
    const fetcher = credentialFetcher({ type: '', identityProvider: 'GoogleComputeEngine', audience: 'cluster.local', tokenPath: path });
    expect(await fetcher()).toBe('first');
    writeFileSync(path, 'second');
    expect(await fetcher()).toBe('second');
  });

  test('GoogleComputeEngine: the identity token for the trust domain, asked with the metadata header, kept until near its expiry', async () => {
    requests.length = 0;
    let clock = Date.now();
    const fetcher = gce(() => clock);
    const token = await fetcher();
    expect(claims(token)).toMatchObject({ aud: 'cluster.local', format: 'full' });
    expect(await fetcher()).toBe(token);
    expect(requests).toHaveLength(1);
    // Within five minutes of its expiry it is fetched again.
    clock += 3600_000 - 4 * 60_000;
    const renewed = await fetcher();
    expect(renewed).not.toBe(token);
    expect(requests).toHaveLength(2);
  });

  test('a refusal of the metadata server is an error with its status', async () => {
    failWith = 429;
    try {
      await expect(gce()()).rejects.toThrow('the metadata server answered 429 for the identity token: quota exceeded');
    } finally {
      failWith = undefined;
    }
  });

  test('an unknown type or provider names the setting', () => {
    expect(() => credentialFetcher({ type: 'AWS', identityProvider: 'GoogleComputeEngine', audience: 'a', tokenPath: 'x' })).toThrow(
      'CREDENTIAL_FETCHER_TYPE must be empty or one of GoogleComputeEngine, got "AWS"',
    );
    expect(() => credentialFetcher({ type: 'GoogleComputeEngine', identityProvider: 'Azure', audience: 'a', tokenPath: 'x' })).toThrow(
      /CREDENTIAL_IDENTITY_PROVIDER must be one of GoogleComputeEngine/,
    );
  });
});
