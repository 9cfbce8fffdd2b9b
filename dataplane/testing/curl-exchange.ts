/**
 * Test support: one exchange with the real curl, its response headers parsed (`-i`), for tests
 * that look at what a proxy sent back besides the body.
 */
import { curl } from '../../testing/curl.js';

export interface CurlExchange {
  readonly code: string;
  readonly exit: number;
  /** Lower-case names, each value of a repeated header kept. */
  readonly headers: Readonly<Record<string, readonly string[]>>;
  readonly body: string;
  /** Seconds the exchange took, as curl measured it. */
  readonly seconds: number;
}

export async function curlExchange(args: readonly string[]): Promise<CurlExchange> {
  // A later `-w` replaces curl()'s own: this one writes the status code last as curl() expects, the time before it.
  const result = await curl(['-i', ...args, '-w', '\n%{time_total}\n%{http_code}']);
  // The output: header block, blank line, body, then the time.
  const lines = result.body.split('\n');
  const seconds = Number(lines.pop() ?? '0');
  const text = lines.join('\n');
  const cut = text.indexOf('\r\n\r\n');
  const head = cut < 0 ? text : text.slice(0, cut);
  const headers: Record<string, string[]> = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    (headers[name] ??= []).push(line.slice(colon + 1).trim());
  }
  return { code: result.code, exit: result.exit, headers, body: cut < 0 ? '' : text.slice(cut + 4), seconds };
}
