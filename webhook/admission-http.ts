import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage, type Logger } from '../runtime/index.js';
import { ADMISSION_V1, decodeAdmissionReview, encodeAdmissionReview, type AdmissionRequest, type AdmissionResponse } from './admission-review.js';

/** The reference's cap on an admission body (kube's MaxRequestBodyBytes). */
export const MAX_ADMISSION_BODY_BYTES = 6 * 1024 * 1024;

/** Answers one decoded request; `path` is the URL path it came on (`/inject/cluster/c1/net/n1`). */
export type ReviewHandler = (request: AdmissionRequest, path: string) => AdmissionResponse | Promise<AdmissionResponse>;

export interface AdmissionRoute {
  readonly handle: ReviewHandler;
  /** Told of every HTTP-level error answered on this route, by status code. */
  readonly onHttpError?: (status: number) => void;
}

/**
 * Serves one admission request the reference's way: the body capped at 6 MiB (refused with 400
 * as soon as it grows past, unread; a client waiting for `100 Continue` gets the 400 instead), an empty body 400 `no body found`, a Content-Type other than
 * exactly `application/json` 415, an unreadable review a denial (200), the answer in the review
 * version of the request with its UID. A handler that throws is a denial too: nothing a caller
 * sends brings the server down.
 */
export function serveAdmission(
  route: AdmissionRoute,
  req: IncomingMessage,
  res: ServerResponse,
  log: Logger,
  options: { expectsContinue?: boolean } = {},
): void {
  const httpError = (status: number, message: string): void => {
    route.onHttpError?.(status);
    if (res.headersSent) return;
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', connection: 'close' });
    // Stop reading what is left of a refused body: the connection closes once the answer is out.
    res.end(`${message}\n`, () => req.destroy());
  };
  const tooLarge = `Request entity too large: limit is ${MAX_ADMISSION_BODY_BYTES}`;
  if (Number(req.headers['content-length'] ?? 0) > MAX_ADMISSION_BODY_BYTES) return httpError(400, tooLarge);
  if (options.expectsContinue) res.writeContinue();

  const chunks: Buffer[] = [];
  let size = 0;
  let refused = false;
  req.on('data', (chunk: Buffer) => {
    if (refused) return;
    size += chunk.length;
    if (size > MAX_ADMISSION_BODY_BYTES) {
      refused = true;
      chunks.length = 0;
      httpError(400, tooLarge);
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (refused) return;
    if (size === 0) return httpError(400, 'no body found');
    if (req.headers['content-type'] !== 'application/json') return httpError(415, 'invalid Content-Type, want `application/json`');
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    void answer(route, Buffer.concat(chunks, size).toString('utf8'), path, log).then(
      (body) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      },
      (error: unknown) => {
        log.error({ error: errorMessage(error), path }, 'could not answer an admission request');
        httpError(500, `could not encode response: ${errorMessage(error)}`);
      },
    );
  });
}

async function answer(route: AdmissionRoute, body: string, path: string, log: Logger): Promise<string> {
  const decoded = decodeAdmissionReview(body);
  if ('error' in decoded) {
    log.warn({ path, error: decoded.error }, 'undecodable admission request');
    return encodeAdmissionReview(ADMISSION_V1, '', { allowed: false, message: decoded.error });
  }
  let response: AdmissionResponse;
  try {
    response = await route.handle(decoded.request, path);
  } catch (error) {
    // A deeply nested object can exhaust the stack anywhere in a handler: deny, keep serving.
    log.warn({ path, uid: decoded.request.uid, error: errorMessage(error) }, 'admission handler failed');
    response = { allowed: false, message: `internal error: ${errorMessage(error)}` };
  }
  return encodeAdmissionReview(decoded.version, decoded.request.uid, response);
}
