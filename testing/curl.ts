/** The real curl, as the tests drive the data plane with it. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CurlResult {
  /** The HTTP status, `000` when there was no response. */
  readonly code: string;
  /** curl's exit status: 0, 7 refused, 35 TLS handshake, 52 empty reply, 56 receive failure. */
  readonly exit: number;
  readonly body: string;
  readonly stderr: string;
}

/** Runs curl with `-sS -m <seconds>` and the status code appended; never throws on a failed request. */
export async function curl(args: readonly string[], options: { timeoutSeconds?: number } = {}): Promise<CurlResult> {
  const argv = ['-sS', '-m', String(options.timeoutSeconds ?? 5), '-w', '\n%{http_code}', ...args];
  try {
    const { stdout, stderr } = await run('curl', argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const cut = stdout.lastIndexOf('\n');
    return { body: stdout.slice(0, cut), code: stdout.slice(cut + 1), exit: 0, stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number };
    const out = failed.stdout ?? '';
    const cut = out.lastIndexOf('\n');
    return {
      body: cut < 0 ? '' : out.slice(0, cut),
      code: out.slice(cut + 1) || '000',
      exit: typeof failed.code === 'number' ? failed.code : -1,
      stderr: failed.stderr ?? '',
    };
  }
}

/** The JSON `headers` object a sample backend echoes for `/headers`. */
export function echoedHeaders(body: string): Record<string, string> {
  return (JSON.parse(body) as { headers: Record<string, string> }).headers;
}
