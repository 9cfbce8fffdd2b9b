// Values the API server reads from requests: field managers, continuation tokens, resource versions.
import { badRequest } from './status-error.js';

/** The manager name the API server derives from a user agent such as `kubectl/v1.35.2 (linux/amd64)`. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  if (!userAgent) return 'unknown';
  const slash = userAgent.indexOf('/');
  return (slash < 0 ? userAgent : userAgent.slice(0, slash)).slice(0, 128) || 'unknown';
}

/** List continuation tokens, as the real API server encodes them. */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
}

export function decodeContinue(token: string): { rv: number; start: string } {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { rv?: unknown; start?: unknown };
    if (typeof parsed.rv === 'number' && typeof parsed.start === 'string') return { rv: parsed.rv, start: parsed.start };
  } catch {
    // falls through to the error below
  }
  throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
}

export function parseRevision(value: string): number {
  if (!/^\d+$/.test(value)) throw badRequest(`invalid resource version: ${value}`);
  return Number(value);
}
