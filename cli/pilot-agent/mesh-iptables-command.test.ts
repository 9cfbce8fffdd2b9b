import { connect, createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { describeWithSeeds, readSeed } from '../../testing/seeds.js';
import { Command } from 'commander';
import { buildIptablesRules, captureConfigFromFlags, renderRestore, type CommandResult, type CommandRunner } from '../../agent/iptables/index.js';
// Test support for loading rules for real, kept out of the package's index.
import { cleanupCases, cleanupGolden, rulesCases, rulesGolden } from '../../agent/iptables/testing/golden.js';
import { newPrivateNetns, privateNetnsUnavailable } from '../../agent/iptables/testing/private-netns.js';
import { addLoggingFlags } from '../../runtime/index.js';
import { freePort } from '../../testing/wait-for.js';
import { newMeshCleanIptablesCommand, newMeshIptablesCommand, type MeshIptablesDeps } from './mesh-iptables-command.js';
import { runProgram, type CliIo } from '../run-cli.js';

const SEED = readSeed('daemon');
const cases = rulesCases();

interface Outcome {
  code: number;
  out: string;
  err: string;
}

/** Runs `pilot-agent <args>` with both commands wired the way the agent program wires its commands. */
async function agent(args: readonly string[], deps: MeshIptablesDeps = {}): Promise<Outcome> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (t) => (out += t), stderr: (t) => (err += t) };
  const program = new Command('pilot-agent').addCommand(newMeshIptablesCommand(io, deps)).addCommand(newMeshCleanIptablesCommand(io, deps));
  for (const command of program.commands) addLoggingFlags(command);
  const code = await runProgram(program, args, io);
  return { code, out, err };
}

function helpOf(name: string, deps: MeshIptablesDeps = {}): string {
  const io: CliIo = { stdout: () => undefined, stderr: () => undefined };
  const command = name === 'mesh-iptables' ? newMeshIptablesCommand(io, deps) : newMeshCleanIptablesCommand(io, deps);
  return addLoggingFlags(command).helpInformation();
}

/** The help entry of one flag: its line and any wrapped continuation lines. */
function helpEntry(help: string, flag: string): string {
  const lines = help.split('\n');
  const start = lines.findIndex((line) => new RegExp(`^ {2}(-\\w, )?${flag} `).test(line));
  expect(start).toBeGreaterThanOrEqual(0);
  const next = lines.findIndex((line, index) => index > start && /^ {2}-/.test(line));
  return lines.slice(start, next < 0 ? undefined : next).join('\n');
}

function recordingRunner(calls: string[], answer: (argv: string) => Partial<CommandResult> = () => ({})): CommandRunner {
  return async (argv, stdin) => {
    const line = argv.join(' ');
    calls.push(stdin === undefined ? line : `${line} <<< ${stdin.length} bytes`);
    return { code: 0, stdout: '', stderr: '', ...answer(line) };
  };
}

const noResolvConf = (): Promise<string> => Promise.reject(new Error('resolv.conf must not be read'));
const resolvConf =
  (servers: readonly string[] = []) =>
  async (): Promise<string> =>
    servers.map((s) => `nameserver ${s}\n`).join('');

describeWithSeeds('mesh-iptables flags', () => {
  const start = SEED.indexOf('`mesh-iptables` flags:');
  const rows = SEED.slice(start)
    .split('\n')
    .filter((line) => line.startsWith('| --'))
    .map((line) => {
      const cells = line.split('|').map((cell) => cell.trim());
      const names = /^(--[\w-]+)(?: \((-\w)\))?$/.exec(cells[1] ?? '');
      return { flag: names?.[1] as string, short: names?.[2], defaultText: (cells[3] ?? '').replace(/`/g, '') };
    });
  // Without the seeds the suite is skipped; a placeholder row keeps its table non-empty.
  if (rows.length === 0) rows.push({ flag: '--seeds-absent', short: undefined, defaultText: '' });

  test('the seed lists 23 flags', () => {
    expect(rows).toHaveLength(23);
  });

  test.each(rows)('$flag is offered with its short form and the seed default', ({ flag, short, defaultText }) => {
    const entry = helpEntry(helpOf('mesh-iptables'), flag);
    if (short) expect(entry).toContain(`${short}, ${flag}`);
    if (defaultText.startsWith('$')) {
      const [name, value] = defaultText.split('=').map((s) => s.trim());
      expect(entry).toContain(value === undefined ? `${name} = ""` : `${name} = ${value}`);
    } else if (defaultText === 'empty') {
      expect(entry).not.toContain('(default:');
    } else if (defaultText !== '') {
      expect(entry).toMatch(new RegExp(`\\(default: "?${defaultText}"?\\)`));
    }
  });

  test('mesh-clean-iptables offers the seed flags', () => {
    const help = helpOf('mesh-clean-iptables');
    for (const flag of ['-n, --dry-run', '-g, --proxy-gid', '-u, --proxy-uid', '--redirect-dns']) expect(help).toContain(flag);
  });

  test('defaults passed in by the program show in help and apply', async () => {
    const defaults = { proxyPort: '16001', localExcludePorts: '15090', serviceExcludeCidr: '10.0.0.0/8', redirectDns: true };
    expect(helpEntry(helpOf('mesh-iptables', { defaults }), '--proxy-port')).toContain('$PROXY_PORT = 16001');
    expect(helpEntry(helpOf('mesh-iptables', { defaults }), '--mesh-local-exclude-ports')).toContain('$MESH_LOCAL_EXCLUDE_PORTS = "15090"');
    const { code, out } = await agent(['mesh-iptables', '-n', '-b', '*', '-i', '*', '--capture-all-dns'], { defaults });
    expect(code).toBe(0);
    expect(out).toContain('--to-ports 16001');
    expect(out).toContain('-A MESH_INBOUND -p tcp --dport 15090 -j RETURN');
    expect(out).toContain('-A MESH_OUTPUT -d 10.0.0.0/8 -j RETURN');
    expect(out).toContain('--to-ports 15053');
  });

  test('the logging flags every agent command carries do not clash', async () => {
    const { code, err } = await agent(['mesh-iptables', '-n', '--log_output_level', 'default:debug', '--log_as_json']);
    expect(err).toBe('');
    expect(code).toBe(0);
  });
});

describe('mesh-iptables --dry-run prints what the golden files hold', () => {
  test.each(cases)('$name', async ({ name, args, nameServers }) => {
    const deps = { readResolvConf: resolvConf(nameServers) };
    const commands = await agent(['mesh-iptables', '-n', ...args], deps);
    expect(commands).toEqual({ code: 0, out: rulesGolden(name).commands, err: '' });
    const restore = await agent(['mesh-iptables', '--dry-run', '--restore-format', ...args], deps);
    expect(restore).toEqual({ code: 0, out: rulesGolden(name).restore, err: '' });
  });
});

describe('bad flag values are usage errors naming the flag (exit 2)', () => {
  test.each([
    [['-b', '80,http'], /invalid --mesh-inbound-ports "80,http"/],
    [['-d', '1:0'], /invalid --mesh-local-exclude-ports "1:0"/],
    [['-q', 'x'], /invalid --mesh-outbound-ports "x"/],
    [['-o', '70000'], /invalid --mesh-local-outbound-ports-exclude "70000"/],
    [['-i', '10.0.0.0/40'], /invalid --mesh-service-cidr "10.0.0.0\/40"/],
    [['-x', 'fd00::zz/8'], /invalid --mesh-service-exclude-cidr "fd00::zz\/8"/],
    [['-m', 'NAT'], /invalid --mesh-inbound-interception-mode "NAT": expected REDIRECT or TPROXY/],
    [['-p', 'abc'], /invalid --proxy-port "abc"/],
    [['-z', '0'], /invalid --inbound-capture-port "0"/],
    [['-e', '99999'], /invalid --inbound-tunnel-port "99999"/],
    [['--iptables-probe-port', 'x'], /invalid --iptables-probe-port "x"/],
    [['-t', 'x'], /invalid --mesh-inbound-tproxy-mark "x"/],
    [['-r', '-1'], /invalid --mesh-inbound-tproxy-route-table "-1"/],
    [['-u', 'root'], /invalid --proxy-uid "root"/],
    [['-g', '1,a'], /invalid --proxy-gid "1,a"/],
    [['-k', 'has space'], /invalid --orch-virt-interfaces "has space"/],
    [['--probe-timeout', 'soon'], /--probe-timeout.*expected a duration/],
    [['--redirect-dns=maybe'], /expected true or false, got "maybe"/],
    [['--no-such-flag'], /unknown option '--no-such-flag'/],
  ])('%j', async (args, message) => {
    const calls: string[] = [];
    const { code, out, err } = await agent(['mesh-iptables', ...args], { run: recordingRunner(calls), readResolvConf: noResolvConf });
    expect(code).toBe(2);
    expect(err).toMatch(message);
    expect(out).toBe('');
    expect(calls).toEqual([]);
  });

  test('mesh-clean-iptables rejects a bad id', async () => {
    const { code, err } = await agent(['mesh-clean-iptables', '-u', 'x'], { run: recordingRunner([]) });
    expect(code).toBe(2);
    expect(err).toContain('invalid --proxy-uid "x"');
  });
});

describe('mesh-iptables without --dry-run', () => {
  test('prints the commands, then applies them with iptables-restore', async () => {
    const calls: string[] = [];
    const args = ['-b', '*', '-i', '*'];
    const { code, out, err } = await agent(['mesh-iptables', ...args], { run: recordingRunner(calls) });
    expect({ code, err }).toEqual({ code: 0, err: '' });
    expect(out).toBe((await agent(['mesh-iptables', '-n', ...args])).out);
    const rules = buildIptablesRules(captureConfigFromFlags({ meshInboundPorts: '*', meshServiceCidr: '*' }));
    expect(calls).toEqual([`iptables-restore --noflush <<< ${renderRestore(rules.ipv4).length} bytes`]);
  });

  test('a failing command fails the run (exit 1), naming the command and its error', async () => {
    const run = recordingRunner([], (argv) => (argv.startsWith('iptables-restore') ? { code: 1, stderr: 'iptables-restore: line 3 failed\n' } : {}));
    const { code, err } = await agent(['mesh-iptables', '-f'], { run });
    expect(code).toBe(1);
    expect(err).toBe('Error: "iptables-restore --noflush" failed with exit code 1: iptables-restore: line 3 failed\n');
  });

  test('--skip-rule-apply builds, prints and runs nothing', async () => {
    const calls: string[] = [];
    expect(await agent(['mesh-iptables', '--skip-rule-apply', '-b', '*'], { run: recordingRunner(calls) })).toEqual({ code: 0, out: '', err: '' });
    expect(calls).toEqual([]);
  });
});

describe('DNS capture and resolv.conf', () => {
  test('resolv.conf is read only for --redirect-dns without --capture-all-dns', async () => {
    for (const args of [[], ['--capture-all-dns'], ['--redirect-dns', '--capture-all-dns']]) {
      expect((await agent(['mesh-iptables', '-n', ...args], { readResolvConf: noResolvConf })).code).toBe(0);
    }
    const { out } = await agent(['mesh-iptables', '-n', '--redirect-dns'], { readResolvConf: resolvConf(['10.96.0.10']) });
    expect(out).toContain('iptables -t nat -A OUTPUT -p udp --dport 53 -d 10.96.0.10/32 -j REDIRECT --to-ports 15053');
  });

  test('an unreadable resolv.conf fails the run', async () => {
    const { code, err } = await agent(['mesh-iptables', '-n', '--redirect-dns'], { readResolvConf: () => Promise.reject(new Error('ENOENT')) });
    expect(code).toBe(1);
    expect(err).toBe('Error: cannot read name servers from /etc/resolv.conf: ENOENT\n');
  });

  test('no name server means no DNS capture, with a warning through the logger the --log_* flags describe', async () => {
    const { code, out, err } = await agent(['mesh-iptables', '-n', '--redirect-dns', '--log_target', 'stderr', '--log_as_json'], {
      readResolvConf: resolvConf(),
    });
    expect(code).toBe(0);
    expect(JSON.parse(err)).toMatchObject({
      level: 'warn',
      msg: '--redirect-dns is set without --capture-all-dns, and /etc/resolv.conf lists no name server: DNS is not captured',
    });
    expect(out).not.toContain('15053');
    const quiet = await agent(['mesh-iptables', '-n', '--redirect-dns', '--log_output_level', 'default:error'], { readResolvConf: resolvConf() });
    expect(quiet.err + quiet.out).not.toContain('no name server');
  });
});

describe('mesh-iptables --run-validation', () => {
  async function probeAddress(port: number, handle: (socket: Socket) => void): Promise<{ server: Server; sockets: Set<Socket> }> {
    const sockets = new Set<Socket>();
    const server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      handle(socket);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.6', resolve));
    return { server, sockets };
  }

  test('passes when connections to the probe port reach the inbound capture port', async () => {
    const [proxy, inbound, probe] = [await freePort(), await freePort(), await freePort('127.0.0.6')];
    // Stands in for the REDIRECT rule that sends the proxy's own connections to the inbound capture port.
    const redirect = await probeAddress(probe, (socket) => {
      const upstream = connect({ host: '127.0.0.1', port: inbound }).on('error', () => socket.destroy());
      socket.pipe(upstream).pipe(socket);
    });
    try {
      const args = ['--skip-rule-apply', '--run-validation', '-p', `${proxy}`, '-z', `${inbound}`, '--iptables-probe-port', `${probe}`];
      expect(await agent(['mesh-iptables', ...args])).toEqual({ code: 0, out: 'iptables validation passed\n', err: '' });
    } finally {
      for (const socket of redirect.sockets) socket.destroy();
      await new Promise((resolve) => redirect.server.close(resolve));
    }
  });

  test('fails (exit 1) when nothing is redirected within --probe-timeout', async () => {
    const [proxy, inbound, probe] = [await freePort(), await freePort(), await freePort('127.0.0.6')];
    const args = [
      '--skip-rule-apply',
      '--run-validation',
      '--probe-timeout',
      '200ms',
      '-p',
      `${proxy}`,
      '-z',
      `${inbound}`,
      '--iptables-probe-port',
      `${probe}`,
    ];
    const { code, err } = await agent(['mesh-iptables', ...args]);
    expect(code).toBe(1);
    expect(err).toMatch(/^Error: iptables validation failed: no connection to 127\.0\.0\.6:\d+ was redirected .* within 200ms/);
  });
});

describe('mesh-clean-iptables', () => {
  test.each(cleanupCases())('--dry-run prints $name', async ({ name, args, nameServers }) => {
    expect(await agent(['mesh-clean-iptables', ...args], { readResolvConf: resolvConf(nameServers) })).toEqual({
      code: 0,
      out: cleanupGolden(name).commands,
      err: '',
    });
  });

  test('without --dry-run runs every command, absent rules being no error', async () => {
    const calls: string[] = [];
    const run = recordingRunner(calls, (argv) => (argv.includes(' -D ') ? { code: 1, stderr: 'Bad rule' } : {}));
    const { code, out } = await agent(['mesh-clean-iptables'], { run });
    expect(code).toBe(0);
    expect(calls.slice(0, 2)).toEqual(['iptables-save', 'iptables -t nat -D PREROUTING -p tcp -j MESH_INBOUND']);
    const failed = calls.filter((c) => c.includes(' -D ')).length;
    const ran = calls.filter((c) => !c.endsWith('-save')).length;
    expect(out).toBe(`mesh iptables rules removed (${failed} of ${ran} clean-up commands found nothing to remove)\n`);
  });

  test('an unreadable resolv.conf is only a warning', async () => {
    const { code, err } = await agent(['mesh-clean-iptables', '-n', '--redirect-dns', '--log_target', 'stderr', '--log_as_json'], {
      readResolvConf: () => Promise.reject(new Error('EACCES')),
    });
    expect(code).toBe(0);
    expect(JSON.parse(err)).toMatchObject({ level: 'warn', msg: 'cannot read name servers from /etc/resolv.conf', error: 'EACCES' });
  });
});

const unavailable = privateNetnsUnavailable();
const describeReal = unavailable === undefined ? describe : describe.skip;
if (unavailable) console.warn(`skipped: the mesh-iptables run in a private network namespace (${unavailable})`);

describeReal(`in a private network namespace, for real${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  const register = fileURLToPath(new URL('../../testing/ts-register.mjs', import.meta.url));
  const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
  // The agent run by another node process inside the namespace, through the same command code.
  const script = `
    const { Command } = await import('commander');
    const { newMeshIptablesCommand, newMeshCleanIptablesCommand } = await import(${JSON.stringify(new URL('./mesh-iptables-command.ts', import.meta.url).href)});
    const { runProgram, processIo } = await import(${JSON.stringify(new URL('../run-cli.ts', import.meta.url).href)});
    const program = new Command('pilot-agent').addCommand(newMeshIptablesCommand(processIo)).addCommand(newMeshCleanIptablesCommand(processIo));
    process.exitCode = await runProgram(program, process.argv.slice(1));
  `;
  const agentIn = (run: CommandRunner, args: string[]): Promise<CommandResult> =>
    run(['sh', '-c', `cd "$0" && exec "$@"`, projectRoot, process.execPath, '--import', register, '--input-type=module', '-e', script, ...args]);

  // Each agent run is a node process that transpiles the command as it starts: the suite takes 11 s
  // quiet and 29 s with two busy loops beside it, against Jest's 30 s default; three times that.
  test('mesh-iptables applies the rules, the redirect really happens, and mesh-clean-iptables removes them', async () => {
    const netns = await newPrivateNetns();
    try {
      // Before any rule, nothing is redirected.
      const before = await agentIn(netns.run, ['mesh-iptables', '--skip-rule-apply', '--run-validation', '--probe-timeout', '300ms']);
      expect(before.code).toBe(1);
      expect(before.stderr).toContain('iptables validation failed');

      // The validation connects as this process's user (root), so root stands in for the proxy's UID.
      const applied = await agentIn(netns.run, ['mesh-iptables', '-u', '0', '-b', '*', '-i', '*', '--run-validation', '--probe-timeout', '5s']);
      expect({ code: applied.code, stderr: applied.stderr }).toEqual({ code: 0, stderr: '' });
      expect(applied.stdout).toMatch(
        /iptables -t nat -A MESH_OUTPUT -o lo ! -d 127\.0\.0\.1\/32 -m owner --uid-owner 0 -j MESH_IN_REDIRECT\n[\s\S]*iptables validation passed\n$/,
      );
      expect((await netns.run(['iptables-save', '-t', 'nat'])).stdout).toContain(':MESH_OUTPUT');

      const cleaned = await agentIn(netns.run, ['mesh-clean-iptables', '-u', '0']);
      expect(cleaned.code).toBe(0);
      expect((await netns.run(['iptables-save'])).stdout).not.toContain('MESH_');
      const after = await agentIn(netns.run, ['mesh-iptables', '--skip-rule-apply', '--run-validation', '--probe-timeout', '300ms']);
      expect(after.code).toBe(1);
    } finally {
      await netns.close();
    }
  }, 90_000);
});
