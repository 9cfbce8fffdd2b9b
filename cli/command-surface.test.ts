import type { Command } from 'commander';
import { describe, expect, test } from '@jest/globals';
import { describeWithSeeds, readSeed, seedsAvailable } from '../testing/seeds.js';
import { MAX_DURATION_MS, loadSettings } from '../runtime/index.js';
import { buildMeshctl } from './meshctl/meshctl-program.js';
import { buildPilotAgent } from './pilot-agent/pilot-agent-program.js';
import { buildPilotDiscovery } from './pilot-discovery/pilot-discovery-program.js';
import { runProgram, type CliIo } from './run-cli.js';
import { meshdOptionsFrom } from './pilot-discovery/discovery-server.js';
import type { DiscoveryFlags } from './pilot-discovery/discovery-command.js';

const SEED = readSeed('daemon');
const UTILITY_SEED = readSeed('meshctl');

interface SeedFlag {
  flag: string;
  short?: string;
  defaultText: string;
}

/** The rows of the markdown table that follows `heading` in a seed. */
function seedFlags(text: string, heading: string): SeedFlag[] {
  // Without the seeds the suites are skipped; a placeholder row keeps their tables non-empty.
  if (!seedsAvailable) return [{ flag: '--seeds-absent', defaultText: '' }];
  const start = text.indexOf(heading);
  if (start < 0) throw new Error(`seed section ${heading} not found`);
  const rows: SeedFlag[] = [];
  let inTable = false;
  for (const line of text.slice(start).split('\n').slice(1)) {
    if (line.startsWith('|')) {
      inTable = true;
      const cells = line.split('|').map((cell) => cell.trim());
      const names = /^(--[a-zA-Z][\w-]*)(?:, (-\w))?(?: \((-\w)\))?/.exec(cells[1] ?? '');
      if (!names) continue;
      const flag = names[1] as string;
      const short = names[2] ?? names[3] ?? (cells[2]?.startsWith('-') ? cells[2] : undefined);
      const defaultCell = heading.includes('Global') ? cells[4] : cells[3];
      rows.push({ flag, short, defaultText: (defaultCell ?? '').replace(/`/g, '') });
    } else if (inTable) {
      break;
    }
  }
  return rows;
}

function captureIo(): CliIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return { stdout: (t) => (out += t), stderr: (t) => (err += t), out: () => out, err: () => err };
}

const discovery = (io: CliIo = captureIo()): Command => buildPilotDiscovery(io, () => loadSettings('pilot-discovery', {}));
const agent = (io: CliIo = captureIo()): Command => buildPilotAgent(io, () => loadSettings('pilot-agent', {}));
const meshctl = (io: CliIo = captureIo()): Command => buildMeshctl(io, () => loadSettings('meshctl', { HOME: '/nonexistent' }));

function helpOf(program: Command, path: string[]): string {
  let command = program;
  for (const name of path) {
    const next = command.commands.find((c) => c.name() === name);
    if (!next) throw new Error(`no command ${path.join(' ')}`);
    command = next;
  }
  return command.helpInformation({ error: false });
}

/** How a seed default shows in our help text; placeholders map to the values we use. */
function expectedDefault(defaultText: string): string | undefined {
  if (defaultText === '' || defaultText === 'empty') return undefined;
  if (defaultText === '<orch_name>') return 'Kubernetes';
  if (defaultText.startsWith('$')) return defaultText.split('=').pop()?.trim();
  return defaultText;
}

describeWithSeeds('pilot-discovery discovery', () => {
  const flags = seedFlags(SEED, '`discovery` flags:');

  test('the seed lists the flags we check', () => {
    expect(flags.length).toBe(29);
  });

  test.each(flags)('$flag is offered with the seed default', ({ flag, short, defaultText }) => {
    const help = helpOf(discovery(), ['discovery']);
    const line = help.split('\n').find((l) => l.includes(`${flag} `) || l.trimEnd().endsWith(flag));
    expect(line).toBeDefined();
    if (short) expect(line).toContain(`${short}, ${flag}`);
    const expected = expectedDefault(defaultText);
    if (expected !== undefined && defaultText !== 'empty') {
      const helpFromFlag = help.slice(help.indexOf(flag));
      expect(helpFromFlag.slice(0, helpFromFlag.indexOf('\n  -'))).toContain(expected);
    }
  });
});

describeWithSeeds('logging flags on every command of the daemon and the agent', () => {
  const loggingFlags = seedFlags(SEED, '### Logging flags');
  const commands: Array<[string, () => Command, string[]]> = [
    ['pilot-discovery discovery', discovery, ['discovery']],
    ['pilot-discovery request', discovery, ['request']],
    ['pilot-discovery version', discovery, ['version']],
    ['pilot-agent request', agent, ['request']],
    ['pilot-agent wait', agent, ['wait']],
    ['pilot-agent version', agent, ['version']],
    ['pilot-agent mesh-iptables', agent, ['mesh-iptables']],
    ['pilot-agent mesh-clean-iptables', agent, ['mesh-clean-iptables']],
  ];

  test('the seed lists nine logging flags', () => {
    expect(loggingFlags.map((f) => f.flag)).toEqual([
      '--log_as_json',
      '--log_caller',
      '--log_output_level',
      '--log_rotate',
      '--log_rotate_max_age',
      '--log_rotate_max_backups',
      '--log_rotate_max_size',
      '--log_stacktrace_level',
      '--log_target',
    ]);
  });

  test.each(commands)('%s', (_name, build, path) => {
    const help = helpOf(build(), path);
    for (const { flag, defaultText } of loggingFlags) {
      expect(help).toContain(flag);
      const expected = defaultText.replace(/^\[|\]$/g, '');
      if (expected !== '' && expected !== 'empty') expect(help).toContain(expected);
    }
  });
});

describe('pilot-agent commands', () => {
  test('request has --debug-port 15000, wait has its four flags with the seed defaults', () => {
    const program = agent();
    expect(helpOf(program, ['request'])).toMatch(/--debug-port <int32>.*\(default: 15000\)/s);
    const wait = helpOf(program, ['wait']);
    expect(wait).toMatch(/--periodMillis <int>.*\(default: 500\)/s);
    expect(wait).toMatch(/--requestTimeoutMillis <int>.*\(default: 500\)/s);
    expect(wait).toMatch(/--timeoutSeconds <int>.*\(default: 60\)/s);
    expect(wait).toContain('http://localhost:15021/healthz/ready');
  });
});

describeWithSeeds('meshctl global flags', () => {
  const globals = seedFlags(UTILITY_SEED, '### Global flags');

  test('the seed lists five global flags', () => {
    expect(globals.map((g) => g.flag)).toEqual(['--context', '--meshNamespace', '--orchconfig', '--namespace', '--vklog']);
  });

  test.each(globals)('$flag', ({ flag, short, defaultText }) => {
    const help = meshctl().helpInformation();
    expect(help).toContain(short ? `${short}, ${flag}` : flag);
    const expected = expectedDefault(defaultText);
    if (expected) expect(help).toContain(expected);
  });

  test('MESHCTL_MESHNAMESPACE changes the --meshNamespace default', () => {
    const program = buildMeshctl(captureIo(), () => loadSettings('meshctl', { MESHCTL_MESHNAMESPACE: 'other-system' }));
    expect(program.helpInformation()).toContain('"other-system"');
  });
});

describe('bad input is a usage error with exit code 2', () => {
  test.each([
    ['unknown flag', ['discovery', '--grpcAddress', ':1'], /unknown option '--grpcAddress'/],
    ['bad duration', ['discovery', '--keepaliveInterval', 'fast'], /--keepaliveInterval.*expected a duration/],
    ['bad port', ['discovery', '--ctrlz_port', '70000'], /--ctrlz_port.*0 to 65535/],
    ['bad address', ['discovery', '--grpcAddr', 'nowhere'], /--grpcAddr.*listen address/],
    ['bad registry', ['discovery', '--registries', 'orch,Consul'], /--registries.*"Consul"/],
    ['bad cipher suite', ['discovery', '--tls-cipher-suites', 'TLS_NULL'], /--tls-cipher-suites.*"TLS_NULL"/],
    ['bad log level', ['discovery', '--log_output_level', 'ads:loud', '--configDir', '/nonexistent-dir'], /ads:loud/],
    ['unknown command with a suggestion', ['discovry'], /unknown command 'discovry'[\s\S]*Did you mean discovery\?/],
    ['bad version output', ['version', '-o', 'xml'], /--output.*xml/],
  ])('%s', async (_name, args, message) => {
    const io = captureIo();
    const code = await runProgram(discovery(io), args, io);
    expect(code).toBe(2);
    expect(io.err()).toMatch(message);
  });

  test('a missing config folder names the flag', async () => {
    const io = captureIo();
    const code = await runProgram(discovery(io), ['discovery', '--configDir', '/nonexistent-dir'], io);
    expect(code).toBe(2);
    expect(io.err()).toContain('invalid --configDir "/nonexistent-dir": expected an existing directory');
  });

  test('meshctl rejects an unknown flag', async () => {
    const io = captureIo();
    expect(await runProgram(meshctl(io), ['version', '--remot'], io)).toBe(2);
    expect(io.err()).toMatch(/unknown option '--remot'[\s\S]*--remote/);
  });

  test('stringSlice flags split commas and replace their default', async () => {
    const program = discovery();
    const command = program.commands.find((c) => c.name() === 'discovery') as Command;
    command.action(() => undefined);
    await program.parseAsync(['discovery', '--plugins', 'authn', '--plugins', 'authz,ext_authz'], { from: 'user' });
    expect(command.opts().plugins).toEqual(['authn', 'authz', 'ext_authz']);
    // The daemon generates the security filters of these plugins only (xds/security/security-plugins.test.ts).
    expect(meshdOptionsFrom(command.opts() as DiscoveryFlags, { settings: loadSettings('pilot-discovery', {}), args: [] }).plugins).toEqual([
      'authn',
      'authz',
      'ext_authz',
    ]);
    expect(command.opts().keepaliveMaxServerConnectionAge).toBe(MAX_DURATION_MS);
  });
});

describe('version', () => {
  test.each([
    [['version', '--short'], /^\d+\.\d+\.\d+\n$/],
    [['version'], /^version\.BuildInfo\{Version:"\d+\.\d+\.\d+", GitRevision:"[^"]+"/],
    [['version', '-o', 'json'], /"version": "\d+\.\d+\.\d+"/],
    [['version', '-o', 'yaml'], /^version: \d+\.\d+\.\d+$/m],
  ])('pilot-discovery %j', async (args, expected) => {
    const io = captureIo();
    expect(await runProgram(discovery(io), args, io)).toBe(0);
    expect(io.out()).toMatch(expected);
  });

  test('meshctl version --remote=false prints only the client', async () => {
    const io = captureIo();
    expect(await runProgram(meshctl(io), ['version', '--remote=false', '--short'], io)).toBe(0);
    expect(io.out()).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe('Go-style bool flags', () => {
  test.each([
    [['version', '--remote=false', '--short'], false],
    [['version', '--remote', 'false', '--short'], false],
    [['version', '--remote', '--short'], true],
  ])('meshctl %j', async (args, remote) => {
    const program = meshctl();
    const version = program.commands.find((c) => c.name() === 'version') as Command;
    version.action(() => undefined);
    await program.parseAsync(args, { from: 'user' });
    expect(version.opts().remote).toBe(remote);
  });

  test('a bad bool value is a usage error', async () => {
    const io = captureIo();
    expect(await runProgram(meshctl(io), ['version', '--remote=maybe'], io)).toBe(2);
    expect(io.err()).toContain('expected true or false, got "maybe"');
  });
});
