/**
 * A signing thread of the signing pool: verifies and signs the CSRs it is sent with its own copy of
 * the CA (the key parsed in this thread), for the lifetime and at the time each job carries, and
 * answers each by its id.
 */
import { parentPort } from 'node:worker_threads';
import { newRealClock } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import { newCertificateAuthority, type CertificateAuthority } from './certificate-authority.js';
import { loadKeyCertBundle } from './key-cert-bundle.js';
import type { SigningAnswer, SigningMessage } from './signing-job.js';

// Jobs carry a lifetime the calling thread has resolved against the settings: none is refused here.
const ANY_TTL_MS = Number.MAX_SAFE_INTEGER;
let jobNowMs = 0;
const clock = { ...newRealClock(), now: () => jobNowMs };
let ca: CertificateAuthority | undefined;

parentPort?.on('message', (message: SigningMessage) => {
  if (message.kind === 'bundle') {
    // The calling thread loaded the same material before sending it; should this thread fail to,
    // its jobs are refused rather than signed with the material it had before.
    try {
      ca = newCertificateAuthority({ bundle: loadKeyCertBundle(message.material), clock, defaultTtlMs: ANY_TTL_MS, maxTtlMs: ANY_TTL_MS });
    } catch {
      ca = undefined;
    }
    return;
  }
  let answer: SigningAnswer;
  try {
    if (!ca) throw new CaError('ca-unavailable', 'the signing thread has no CA material');
    jobNowMs = message.nowMs;
    answer = { id: message.id, issued: ca.signCsr(message.csrPem, message.identity, message.resolvedTtlMs) };
  } catch (error) {
    const text = error instanceof Error ? error.message : String(error);
    answer = { id: message.id, error: error instanceof CaError ? { caCode: error.code, message: text } : { message: text } };
  }
  parentPort?.postMessage(answer);
});
