import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newNopLogger } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { decodePemBlocks } from '../../pki/index.js';
import { certificateAuthority } from '../../testing/openssl.js';
import { waitFor } from '../../testing/wait-for.js';
import { newAgentTrustBundle } from './trust-bundle.js';

let dir: string;
let rootA: string;
let rootB: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trust-bundle-'));
  rootA = readFileSync((await certificateAuthority(dir, 'a')).certFile, 'utf8');
  rootB = readFileSync((await certificateAuthority(dir, 'b')).certFile, 'utf8');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('the agent trust bundle', () => {
  test('follows the mounted file and the CA answers, deduplicated, and tells grpc-js of each change', async () => {
    const file = join(dir, 'root-cert.pem');
    writeFileSync(file, rootA);
    const clock = new FakeClock();
    const bundle = newAgentTrustBundle({ file, pollMs: 1000, clock, log: newNopLogger('cache') });
    const seen: (string | null)[] = [];
    bundle.addCaCertificateListener((update) => seen.push(update ? update.caCertificate.toString() : null));
    await bundle.start();
    await flush();
    expect(decodePemBlocks(bundle.current())).toHaveLength(1);

    bundle.learn(rootA + rootB);
    expect(decodePemBlocks(bundle.current())).toHaveLength(2);
    // The CA moved on to B alone; the file still holds A: both are trusted.
    bundle.learn(rootB);
    expect(decodePemBlocks(bundle.current())).toHaveLength(2);
    // The published roots follow: A is gone.
    writeFileSync(file, rootB);
    clock.advance(1000);
    await waitFor(() => decodePemBlocks(bundle.current()).length === 1, { description: 'the file re-read' });
    expect(seen.at(-1)).toBe(bundle.current());
    bundle.stop();
  });

  test('a missing file is no error: the bundle is empty until roots arrive', async () => {
    const bundle = newAgentTrustBundle({ file: join(dir, 'absent.pem'), clock: new FakeClock(), log: newNopLogger('cache') });
    await bundle.start();
    expect(bundle.current()).toBe('');
    bundle.learn(rootA);
    expect(decodePemBlocks(bundle.current())).toHaveLength(1);
    bundle.stop();
  });
});
