import { describe, expect, test } from '@jest/globals';
import { errorMessage, MeshError } from '../../runtime/index.js';
import { applyIptablesRules } from './apply-rules.js';
import { buildIptablesRules } from './build-rules.js';
import { captureConfigFromFlags, type CaptureFlagValues } from './capture-config.js';
import { newProcessRunner, type CommandResult, type CommandRunner } from './command-runner.js';
import { renderRestore } from './render.js';

interface Call {
  argv: string;
  stdin?: string;
}

/** Records what would run; answers with `answer(argv)` (success by default). */
function recordingRunner(calls: Call[], answer: (argv: string) => Partial<CommandResult> = () => ({})): CommandRunner {
  return async (argv, stdin) => {
    const line = argv.join(' ');
    calls.push(stdin === undefined ? { argv: line } : { argv: line, stdin });
    return { code: 0, stdout: '', stderr: '', ...answer(line) };
  };
}

const rulesFor = (flags: CaptureFlagValues) => buildIptablesRules(captureConfigFromFlags(flags));

describe('applyIptablesRules', () => {
  test('IPv4 only: one iptables-restore --noflush with the whole rule set on standard input', async () => {
    const calls: Call[] = [];
    const rules = rulesFor({ meshInboundPorts: '*', meshServiceCidr: '*' });
    await applyIptablesRules(rules, recordingRunner(calls));
    expect(calls).toEqual([{ argv: 'iptables-restore --noflush', stdin: renderRestore(rules.ipv4) }]);
  });

  test('with IPv6 ranges: ip set-up and restore for each family, IPv4 first', async () => {
    const calls: Call[] = [];
    const rules = rulesFor({ meshInboundInterceptionMode: 'TPROXY', meshInboundPorts: '80', meshServiceCidr: 'fd00::/8' });
    await applyIptablesRules(rules, recordingRunner(calls));
    expect(calls.map((c) => c.argv)).toEqual([
      'ip -f inet rule add fwmark 1337 lookup 133',
      'ip -f inet route add local default dev lo table 133',
      'iptables-restore --noflush',
      'ip -6 addr add ::6/128 dev lo',
      'ip -f inet6 rule add fwmark 1337 lookup 133',
      'ip -f inet6 route add local default dev lo table 133',
      'ip6tables-restore --noflush',
    ]);
    expect(calls[6]?.stdin).toBe(renderRestore(rules.ipv6));
  });

  test('routes and addresses left by an earlier run are no error', async () => {
    const calls: Call[] = [];
    const run = recordingRunner(calls, (argv) =>
      argv.startsWith('ip ') ? { code: 2, stderr: argv.includes('addr') ? 'Error: ipv6: address already assigned.' : 'RTNETLINK answers: File exists' } : {},
    );
    await applyIptablesRules(rulesFor({ meshInboundInterceptionMode: 'TPROXY', meshInboundPorts: '80', meshServiceCidr: 'fd00::/8' }), run);
    expect(calls.at(-1)?.argv).toBe('ip6tables-restore --noflush');
  });

  test.each([
    ['a failing ip command', 'ip -f inet rule add', 'ip -f inet rule add fwmark 1337 lookup 133', 'RTNETLINK answers: Operation not permitted'],
    ['a failing restore', 'iptables-restore', 'iptables-restore --noflush', "iptables-restore v1.8.9 (nf_tables): Couldn't load match `owner'"],
  ])('%s stops the apply with an error naming the command and its stderr', async (_name, failing, command, stderr) => {
    const calls: Call[] = [];
    const run = recordingRunner(calls, (argv) => (argv.startsWith(failing) ? { code: 2, stderr: `${stderr}\n` } : {}));
    const rules = rulesFor({ meshInboundInterceptionMode: 'TPROXY', meshInboundPorts: '80', meshServiceCidr: 'fd00::/8' });
    const error = await applyIptablesRules(rules, run).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(MeshError);
    expect((error as MeshError).code).toBe('iptables-command-failed');
    expect(errorMessage(error)).toBe(`"${command}" failed with exit code 2: ${stderr}`);
    expect(calls.at(-1)?.argv).toBe(command);
  });
});

describe('newProcessRunner', () => {
  const run = newProcessRunner();

  test('feeds standard input and collects output and the exit code', async () => {
    expect(await run(['sh', '-c', 'tr a-z A-Z; echo oops >&2; exit 3'], 'rules\n')).toEqual({ code: 3, stdout: 'RULES\n', stderr: 'oops\n' });
  });

  test('a missing program is a result, not a crash', async () => {
    const result = await run(['mesh-no-such-program-here']);
    expect(result.code).toBe(-1);
    expect(result.stderr).toContain('mesh-no-such-program-here: command not found');
  });

  test('a program that ignores its input does not break the runner', async () => {
    expect((await run(['true'], 'x'.repeat(1 << 20))).code).toBe(0);
  });
});
