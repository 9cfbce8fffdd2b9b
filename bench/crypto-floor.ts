/**
 * The crypto floor of one issuance, timed with node:crypto per CPU second (per core):
 *   - one sign with the CA's key over a TBS certificate of the size the CA produces;
 *   - the CSR's self-signature: the requester's P-256 key imported from its coordinates (a JWK,
 *     node's cheapest synchronous import; OpenSSL checks the point there), then one verify.
 * The token's signature (ES256 with the issuer's key, parsed once) is timed too but not counted:
 * the CA verifies a token once and then answers from its verdict cache until the token's exp.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign, verify, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface CryptoFloor {
  readonly signUs: number;
  readonly csrKeyImportUs: number;
  readonly csrVerifyUs: number;
  /** Not in the floor: tokens are verified once per token. */
  readonly tokenVerifyUs: number;
  /** Certificates per CPU second: 1 / (sign + CSR key import + CSR verify). */
  readonly perCore: number;
  /** Without the key import: 1 / (sign + verify), both keys already parsed. */
  readonly parsedKeysPerCore: number;
  /** The floor of a call bringing a token not seen before: the floor plus one token verify. */
  readonly withTokenPerCore: number;
}

export interface CryptoFloorOptions {
  readonly caKey: KeyObject;
  readonly tbsLength: number;
  /** The token's signing input and signature, and the issuer's public key. */
  readonly token: { readonly signingInput: Buffer; readonly signature: Buffer; readonly key: KeyObject };
}

const CSR_INFO_LENGTH = 200;
const KEYS = 200;
const CPU_MS = 1000;

/**
 * CPU time of the calling thread in µs (Linux: /proc/thread-self, in clock ticks of 10 ms), else
 * of the process. The thread's own: the process's would count V8's collector finishing an
 * earlier phase's garbage on its own threads meanwhile.
 */
function threadCpuMicros(): number {
  try {
    const stat = readFileSync('/proc/thread-self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    const { user, system } = process.cpuUsage();
    return user + system;
  }
}

/** Microseconds of CPU per call of `fn`, over about CPU_MS of CPU after a warm-up. */
function cpuMicros(fn: (i: number) => unknown): number {
  for (let i = 0; i < 300; i++) fn(i);
  const before = threadCpuMicros();
  let calls = 0;
  let used = 0;
  while (used < CPU_MS * 1000) {
    for (let i = 0; i < 50; i++) fn(calls + i);
    calls += 50;
    used = threadCpuMicros() - before;
  }
  return used / calls;
}

/**
 * Signatures per CPU second of the calling thread, node:crypto's one-shot `sign` with SHA-256
 * over `tbsLength` bytes: the binding's rate, to set beside `openssl speed` measured just before
 * or after it on a machine in the same state.
 */
export function nodeSignRate(key: KeyObject, tbsLength: number): number {
  const tbs = randomBytes(tbsLength);
  return 1e6 / cpuMicros(() => sign('sha256', tbs, key));
}

export function measureCryptoFloor(options: CryptoFloorOptions): CryptoFloor {
  const tbs = randomBytes(options.tbsLength);
  const requesters = Array.from({ length: KEYS }, () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const info = randomBytes(CSR_INFO_LENGTH);
    return { publicKey, jwk: publicKey.export({ format: 'jwk' }) as JsonWebKey, info, signature: sign('sha256', info, privateKey) };
  });
  const at = (i: number) => requesters[i % KEYS]!;
  const signUs = cpuMicros(() => sign('sha256', tbs, options.caKey));
  const csrKeyImportUs = cpuMicros((i) => createPublicKey({ key: at(i).jwk, format: 'jwk' }));
  const importAndVerifyUs = cpuMicros((i) => {
    const r = at(i);
    if (!verify('sha256', r.info, createPublicKey({ key: r.jwk, format: 'jwk' }), r.signature)) throw new Error('the floor CSR did not verify');
  });
  const parsedVerifyUs = cpuMicros((i) => verify('sha256', at(i).info, at(i).publicKey, at(i).signature));
  const { signingInput, signature, key } = options.token;
  const tokenVerifyUs = cpuMicros(() => verify('sha256', signingInput, { key, dsaEncoding: 'ieee-p1363' }, signature));
  return {
    signUs,
    csrKeyImportUs,
    // What the verify costs on a freshly imported key (OpenSSL prepares the key on first use).
    csrVerifyUs: importAndVerifyUs - csrKeyImportUs,
    tokenVerifyUs,
    perCore: 1e6 / (signUs + importAndVerifyUs),
    parsedKeysPerCore: 1e6 / (signUs + parsedVerifyUs),
    withTokenPerCore: 1e6 / (signUs + importAndVerifyUs + tokenVerifyUs),
  };
}
