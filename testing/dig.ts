/** The real dig (Debian's bind9-dnsutils, installed by `npm test`), as the tests ask DNS servers with it. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface DigAnswer {
  readonly name: string;
  readonly ttl: number;
  readonly type: string;
  readonly data: string;
}

export interface DigResult {
  /** `NOERROR`, `NXDOMAIN`, `SERVFAIL`…; empty when no answer came. */
  readonly status: string;
  /** The header flags: `qr`, `aa`, `rd`, `tc`… */
  readonly flags: readonly string[];
  readonly answers: readonly DigAnswer[];
  readonly output: string;
}

/**
 * `dig @<server> -p <port> <name> <type>`, one try (no retry: a test sees what one query gets);
 * `options.tcp` asks over TCP, `options.noEdns` without EDNS (a 512-byte UDP limit), and
 * `options.ignoreTruncation` keeps a truncated UDP answer instead of asking again over TCP.
 */
export async function dig(
  server: { host: string; port: number },
  name: string,
  type = 'A',
  options: { tcp?: boolean; noEdns?: boolean; ignoreTruncation?: boolean; timeoutSeconds?: number } = {},
): Promise<DigResult> {
  const argv = [`@${server.host}`, '-p', String(server.port), name, type, '+tries=1', `+time=${options.timeoutSeconds ?? 3}`, '+nocookie'];
  if (options.tcp) argv.push('+tcp');
  if (options.noEdns) argv.push('+noedns');
  if (options.ignoreTruncation) argv.push('+ignore');
  let output: string;
  try {
    output = (await run('dig', argv, { encoding: 'utf8' })).stdout;
  } catch (error) {
    const failed = error as { stdout?: string; code?: number | string };
    if (failed.code === 'ENOENT') throw new Error('dig is missing: `npm test` installs it (Debian bind9-dnsutils)', { cause: error });
    output = failed.stdout ?? '';
  }
  const status = /status: ([A-Z]+)/.exec(output)?.[1] ?? '';
  const flags = (/;; flags: ([a-z ]+);/.exec(output)?.[1] ?? '').split(' ').filter(Boolean);
  const answerSection = /;; ANSWER SECTION:\n([\s\S]*?)(?:\n\n|$)/.exec(output)?.[1] ?? '';
  const answers = answerSection
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [owner = '', ttl = '0', , recordType = '', ...data] = line.split(/\s+/);
      return { name: owner, ttl: Number(ttl), type: recordType, data: data.join(' ') };
    });
  return { status, flags, answers, output };
}
