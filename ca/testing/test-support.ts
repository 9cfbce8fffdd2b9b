/**
 * Helpers for the CA tests: the real `openssl` CLI for verification, temp folders, settings.
 * Not exported from index.ts.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadSettings, type Settings } from '../../runtime/index.js';

const execFileAsync = promisify(execFile);

export async function tempDir(prefix = 'mesh-ca-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export async function openssl(args: readonly string[], cwd?: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await execFileAsync('openssl', [...args], { cwd, timeout: 20_000 });
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? e.message}` };
  }
}

export interface VerifyInput {
  /** The trust bundle PEM (`-CAfile`). */
  roots: string;
  leaf: string;
  /** Intermediates PEM (`-untrusted`). */
  untrusted?: string;
  /** Verification time (ms); the current time when absent. */
  atMs?: number;
}

/** `openssl verify -CAfile roots -untrusted chain leaf`, with the leaf's purpose left open. */
export async function opensslVerify(dir: string, input: VerifyInput): Promise<{ ok: boolean; output: string }> {
  const id = Math.random().toString(36).slice(2);
  const roots = join(dir, `roots-${id}.pem`);
  const leaf = join(dir, `leaf-${id}.pem`);
  await writeFile(roots, input.roots);
  await writeFile(leaf, input.leaf);
  const args = ['verify', '-CAfile', roots];
  if (input.untrusted) {
    const chain = join(dir, `chain-${id}.pem`);
    await writeFile(chain, input.untrusted);
    args.push('-untrusted', chain);
  }
  if (input.atMs !== undefined) args.push('-attime', String(Math.floor(input.atMs / 1000)));
  args.push(leaf);
  const result = await openssl(args);
  return { ok: result.ok && /: OK\s*$/.test(result.output), output: result.output };
}

/** `openssl x509 -noout -text` of a PEM certificate. */
export async function opensslText(dir: string, pem: string): Promise<string> {
  const file = join(dir, `text-${Math.random().toString(36).slice(2)}.pem`);
  await writeFile(file, pem);
  const result = await openssl(['x509', '-noout', '-text', '-in', file]);
  if (!result.ok) throw new Error(result.output);
  return result.output;
}

export function daemonSettings(env: Record<string, string> = {}): Settings<'pilot-discovery'> {
  return loadSettings('pilot-discovery', env);
}
