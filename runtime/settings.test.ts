import { describeWithSeeds, readSeed } from '../testing/seeds.js';
import { describe, expect, test } from '@jest/globals';
import { MeshError, UsageError } from './errors.js';
import type { Program } from './settings-info.js';
import {
  PROGRAM_TABLES,
  SETTING_TABLES,
  SettingsError,
  loadSettings,
  programSettings,
  type SettingSpec,
  type SettingTable,
  type Settings,
} from './settings.js';

interface SeedRow {
  name: string;
  type: string;
  default: string;
  meaning: string;
}

/** Splits a Markdown table row on `|`, except inside backticks (SPIFFE_BUNDLE_ENDPOINTS has `||`). */
function cells(line: string): string[] {
  const out: string[] = [];
  let current = '';
  let inCode = false;
  for (const char of line.trim().replace(/^\|/, '').replace(/\|$/, '')) {
    if (char === '`') inCode = !inCode;
    if (char === '|' && !inCode) {
      out.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  out.push(current.trim());
  return out;
}

/** The rows of the first table under the `###` heading that contains `heading`. */
function seedTable(text: string, heading: string): SeedRow[] {
  const lines = text.split('\n');
  const start = lines.findIndex((line) => line.startsWith('### ') && line.includes(heading));
  if (start < 0) throw new Error(`no heading "${heading}" in the seed`);
  let index = start + 1;
  while (index < lines.length && !lines[index]?.startsWith('|')) index++;
  const header = cells(lines[index] ?? '');
  expect(header).toEqual(['Name', 'Type', 'Default', 'Meaning']);
  const rows: SeedRow[] = [];
  for (index += 2; lines[index]?.startsWith('|'); index++) {
    const [name = '', type = '', def = '', meaning = ''] = cells(lines[index] ?? '');
    rows.push({ name, type, default: def, meaning });
  }
  if (rows.length === 0) throw new Error(`the table under "${heading}" is empty`);
  return rows;
}

/** The seed writes some defaults as descriptions; the registry holds our concrete values. */
const PLACEHOLDER_DEFAULTS: Readonly<Record<string, string>> = {
  empty: '',
  '<orch_name>': 'Kubernetes',
  'built-in CA provider name': 'MeshCA',
  'cloud VM provider': 'GoogleComputeEngine',
};

function registryDefault(seedDefault: string): string {
  const text = seedDefault.replace(/^`(.*)`$/, '$1');
  return PLACEHOLDER_DEFAULTS[text] ?? text;
}

let seedTables: Record<SettingTable, SeedRow[]> | undefined;
/** The seed's setting tables, read when a comparison first needs them (only where the seeds are). */
function seedTable_(table: SettingTable): SeedRow[] {
  seedTables ??= {
    shared: seedTable(readSeed('daemon'), 'Shared environment settings'),
    daemon: seedTable(readSeed('daemon'), 'Environment settings only of the daemon'),
    agent: seedTable(readSeed('daemon'), 'Environment settings only of the agent'),
    meshctl: seedTable(readSeed('meshctl'), 'Environment settings'),
  };
  return seedTables[table];
}

const TABLE_NAMES = Object.keys(SETTING_TABLES) as SettingTable[];

/** The settings of a table the seed does not list, each declared as the reference daemon's. */
function referenceOnly(table: SettingTable): string[] {
  return Object.entries(SETTING_TABLES[table] as Readonly<Record<string, SettingSpec>>)
    .filter(([, spec]) => spec.source === 'reference')
    .map(([name]) => name);
}
const PROGRAMS: Program[] = ['pilot-discovery', 'pilot-agent', 'meshctl'];
const HOME = '/home/tester';

function settingsErrorOf(program: Program, env: Record<string, string>): SettingsError {
  try {
    loadSettings(program, env);
  } catch (error) {
    if (error instanceof SettingsError) return error;
    throw error;
  }
  throw new Error('expected a SettingsError');
}

describeWithSeeds('the registry matches the seed tables', () => {
  test.each(TABLE_NAMES)('%s: exactly the same names', (table) => {
    const seedNames = seedTable_(table)
      .map((row) => row.name)
      .sort();
    expect(new Set(seedNames).size).toBe(seedNames.length);
    const reference = new Set(referenceOnly(table));
    expect(
      Object.keys(SETTING_TABLES[table])
        .filter((name) => !reference.has(name))
        .sort(),
    ).toEqual(seedNames);
    for (const name of reference) expect(seedNames).not.toContain(name);
  });

  test("the settings the seed does not list are the reference daemon's, and only the daemon reads them", () => {
    expect(Object.fromEntries(TABLE_NAMES.map((table) => [table, referenceOnly(table)]))).toEqual({
      shared: [],
      daemon: ['BLOCKED_CIDRS_IN_JWKS_URIS'],
      agent: [],
      meshctl: [],
    });
  });

  test.each(TABLE_NAMES)('%s: same types, defaults and meanings', (table) => {
    const registry: Readonly<Record<string, { type: string; default: string; meaning: string }>> = SETTING_TABLES[table];
    for (const row of seedTable_(table)) {
      const spec = registry[row.name];
      expect({ name: row.name, type: spec?.type, default: spec?.default }).toEqual({
        name: row.name,
        type: row.type,
        default: registryDefault(row.default),
      });
      if (row.meaning === '') {
        expect(spec?.meaning.trim()).not.toBe('');
      } else {
        expect({ name: row.name, meaning: spec?.meaning }).toEqual({ name: row.name, meaning: row.meaning });
      }
    }
  });

  test('the seeds have the tables and sizes this registry was written from', () => {
    expect(Object.fromEntries(TABLE_NAMES.map((table) => [table, seedTable_(table).length]))).toEqual({
      shared: 87,
      daemon: 18,
      agent: 32,
      meshctl: 10,
    });
  });

  test('each program reads the shared table and its own', () => {
    const expected: Record<Program, SettingTable[]> = {
      'pilot-discovery': ['shared', 'daemon'],
      'pilot-agent': ['shared', 'agent'],
      meshctl: ['shared', 'meshctl'],
    };
    for (const program of PROGRAMS) {
      expect(PROGRAM_TABLES[program]).toEqual(expected[program]);
      const names = expected[program].flatMap((table) => [...seedTable_(table).map((row) => row.name), ...referenceOnly(table)]).sort();
      expect([...programSettings(program).keys()].sort()).toEqual(names);
      expect(
        loadSettings(program, { HOME })
          .describe()
          .map((info) => info.name),
      ).toEqual(names);
    }
  });

  test('the utility does not read ORCH_SERVICE_HOST; the daemon and the agent do', () => {
    expect(programSettings('meshctl').has('ORCH_SERVICE_HOST')).toBe(false);
    expect(programSettings('pilot-discovery').get('ORCH_SERVICE_HOST')?.meaning).toBe('Orchestrator service host, set in-cluster');
    expect(programSettings('pilot-agent').get('ORCH_SERVICE_HOST')?.meaning).toBe('Set in-cluster');
  });

  test('POD_NAMESPACE has its own default per program', () => {
    expect(loadSettings('pilot-discovery', {}).get('POD_NAMESPACE')).toBe('mesh-system');
    expect(loadSettings('pilot-agent', {}).get('POD_NAMESPACE')).toBe('');
    expect(programSettings('meshctl').has('POD_NAMESPACE')).toBe(false);
  });
});

describeWithSeeds('defaults as the seed writes them', () => {
  test.each(PROGRAMS)('%s: describe() renders every default as the seed writes it', (program) => {
    const tables = PROGRAM_TABLES[program] as readonly SettingTable[];
    const seedDefaults = new Map(tables.flatMap((table) => seedTable_(table).map((row) => [row.name, registryDefault(row.default)] as const)));
    // The seed lists no default for the reference's own settings: the registry's is the reference's.
    for (const name of tables.flatMap(referenceOnly)) seedDefaults.set(name, programSettings(program).get(name)?.default ?? 'not in the registry');
    for (const info of loadSettings(program, { HOME }).describe()) {
      const want = info.name === 'MESHCONFIG' ? `${HOME}/.meshctl/config.yaml` : seedDefaults.get(info.name);
      expect({ name: info.name, default: info.default, value: info.value, isSet: info.isSet }).toEqual({
        name: info.name,
        default: want,
        value: want,
        isSet: false,
      });
    }
  });
});

describe('defaults', () => {
  test('durations render as Go prints them', () => {
    const rendered = Object.fromEntries(
      loadSettings('pilot-discovery', {})
        .describe()
        .map((info) => [info.name, info.default]),
    );
    expect(rendered).toMatchObject({
      PILOT_DEBOUNCE_AFTER: '100ms',
      PILOT_DISTRIBUTION_HISTORY_RETENTION: '1m0s',
      DEFAULT_WORKLOAD_CERT_TTL: '24h0m0s',
      CASERVER_SELF_SIGNED_CA_CERT_TTL: '87600h0m0s',
      MAX_WORKLOAD_CERT_TTL: '2160h0m0s',
      PILOT_JWT_PUB_KEY_REFRESH_INTERVAL: '20m0s',
      MESH_DEFAULT_REQUEST_TIMEOUT: '0s',
      ENABLE_CA_SERVER: 'true',
      PILOT_ENABLE_ANALYSIS: 'false',
      MESHD_CUSTOM_HOST: '',
      PILOT_TRACE_SAMPLING: '1',
    });
  });

  test('typed defaults', () => {
    const daemon = loadSettings('pilot-discovery', {});
    expect(daemon.get('PILOT_DEBOUNCE_AFTER')).toBe(100);
    expect(daemon.get('PILOT_DEBOUNCE_MAX')).toBe(10_000);
    expect(daemon.get('MAX_WORKLOAD_CERT_TTL')).toBe(2160 * 3_600_000);
    expect(daemon.get('PILOT_PUSH_THROTTLE')).toBe(100);
    expect(daemon.get('PILOT_TRACE_SAMPLING')).toBe(1);
    expect(daemon.get('ENABLE_CA_SERVER')).toBe(true);
    expect(daemon.get('CLUSTER_ID')).toBe('Kubernetes');
    const agent = loadSettings('pilot-agent', {});
    expect(agent.get('SECRET_GRACE_PERIOD_RATIO')).toBe(0.5);
    expect(agent.get('CA_PROVIDER')).toBe('MeshCA');
    expect(agent.get('CREDENTIAL_IDENTITY_PROVIDER')).toBe('GoogleComputeEngine');
    expect(agent.get('PROXY_STATUS_PORT')).toBe(15021);
  });

  test('every value has the runtime type of its setting type', () => {
    const runtimeType = { String: 'string', Boolean: 'boolean', Integer: 'number', Float: 'number', Duration: 'number' };
    for (const program of PROGRAMS) {
      const settings = loadSettings(program, { HOME }) as Settings<Program>;
      for (const [name, spec] of programSettings(program)) {
        expect({ name, type: typeof settings.get(name as never) }).toEqual({ name, type: runtimeType[spec.type] });
      }
    }
  });

  test('MESHCONFIG expands HOME from the environment handed in', () => {
    expect(loadSettings('meshctl', { HOME: '/root' }).get('MESHCONFIG')).toBe('/root/.meshctl/config.yaml');
    expect(loadSettings('meshctl', { HOME: '/root/' }).get('MESHCONFIG')).toBe('/root/.meshctl/config.yaml');
    expect(loadSettings('meshctl', {}).get('MESHCONFIG')).toBe('.meshctl/config.yaml');
    expect(loadSettings('meshctl', { HOME: '/root', MESHCONFIG: '/etc/m.yaml' }).get('MESHCONFIG')).toBe('/etc/m.yaml');
  });
});

describe('values from the environment', () => {
  test('parsed, typed and rendered', () => {
    const settings = loadSettings('pilot-discovery', {
      PILOT_DEBOUNCE_AFTER: '1m',
      PILOT_PUSH_THROTTLE: '+7',
      PILOT_TRACE_SAMPLING: '0.25',
      ENABLE_CA_SERVER: 'F',
      CLUSTER_ID: 'east',
      EXTERNAL_CA: 'MESHD_RA_ORCH_API',
      CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL: '-1s',
      UNRELATED: 'ignored',
    });
    expect(settings.get('PILOT_DEBOUNCE_AFTER')).toBe(60_000);
    expect(settings.get('PILOT_PUSH_THROTTLE')).toBe(7);
    expect(settings.get('PILOT_TRACE_SAMPLING')).toBe(0.25);
    expect(settings.get('ENABLE_CA_SERVER')).toBe(false);
    expect(settings.get('CLUSTER_ID')).toBe('east');
    expect(settings.get('EXTERNAL_CA')).toBe('MESHD_RA_ORCH_API');
    expect(settings.get('CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL')).toBe(-1000);
    expect(settings.isSet('PILOT_DEBOUNCE_AFTER')).toBe(true);
    expect(settings.isSet('PILOT_DEBOUNCE_MAX')).toBe(false);
    const info = settings.describe().find((entry) => entry.name === 'PILOT_DEBOUNCE_AFTER');
    expect(info).toEqual({
      name: 'PILOT_DEBOUNCE_AFTER',
      type: 'Duration',
      default: '100ms',
      value: '1m0s',
      isSet: true,
      meaning: SETTING_TABLES.shared.PILOT_DEBOUNCE_AFTER.meaning,
    });
    const boolInfo = settings.describe().find((entry) => entry.name === 'ENABLE_CA_SERVER');
    expect(boolInfo).toMatchObject({ default: 'true', value: 'false', isSet: true });
  });

  test('an empty string counts as unset', () => {
    const settings = loadSettings('pilot-discovery', { PILOT_DEBOUNCE_AFTER: '', ENABLE_CA_SERVER: '', POD_NAMESPACE: '' });
    expect(settings.get('PILOT_DEBOUNCE_AFTER')).toBe(100);
    expect(settings.get('ENABLE_CA_SERVER')).toBe(true);
    expect(settings.get('POD_NAMESPACE')).toBe('mesh-system');
    expect(settings.isSet('PILOT_DEBOUNCE_AFTER')).toBe(false);
  });

  test.each([
    ['1', true],
    ['t', true],
    ['T', true],
    ['TRUE', true],
    ['true', true],
    ['True', true],
    ['0', false],
    ['f', false],
    ['F', false],
    ['FALSE', false],
    ['false', false],
    ['False', false],
  ])('boolean %j is %s', (raw, want) => {
    expect(loadSettings('pilot-agent', { PKCS8_KEY: raw, XDS_AUTH: raw }).get('PKCS8_KEY')).toBe(want);
    expect(loadSettings('pilot-agent', { PKCS8_KEY: raw, XDS_AUTH: raw }).get('XDS_AUTH')).toBe(want);
  });

  test.each(['yes', 'no', 'on', '2', 'tRuE', ' true', 'enabled'])('boolean %j is rejected', (raw) => {
    expect(settingsErrorOf('pilot-agent', { PKCS8_KEY: raw }).message).toBe(`invalid value ${JSON.stringify(raw)} for PKCS8_KEY: expected true or false`);
  });
});

const CIDRS = 'comma-separated CIDR ranges such as 10.0.0.0/8,fd00::/8';

describe('bad values', () => {
  test.each<[Program, string, string, string]>([
    ['pilot-discovery', 'PILOT_DEBOUNCE_AFTER', 'fast', 'a duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'PILOT_DEBOUNCE_AFTER', '10', 'a duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'PILOT_DEBOUNCE_AFTER', '-1s', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'PILOT_DEBOUNCE_MAX', '-1ms', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'DEFAULT_WORKLOAD_CERT_TTL', '-24h', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'MAX_WORKLOAD_CERT_TTL', '-1h', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'PILOT_JWT_PUB_KEY_REFRESH_INTERVAL', '-20m', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-agent', 'SECRET_TTL', '-1s', 'a non-negative duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'MESH_DEFAULT_REQUEST_TIMEOUT', '1x', 'a duration such as 100ms or 1m0s'],
    ['pilot-discovery', 'PILOT_PUSH_THROTTLE', '-3', 'a positive integer'],
    ['pilot-discovery', 'PILOT_PUSH_THROTTLE', '0', 'a positive integer'],
    ['pilot-discovery', 'PILOT_PUSH_THROTTLE', '1.5', 'a positive integer'],
    ['pilot-discovery', 'PILOT_XDS_CACHE_SIZE', '0', 'a positive integer'],
    ['pilot-discovery', 'MESH_GPRC_MAXRECVMSGSIZE', '-1', 'a positive integer'],
    ['pilot-discovery', 'MESH_GPRC_MAXSTREAMS', '0', 'a positive integer'],
    ['pilot-discovery', 'PILOT_STATUS_BURST', 'many', 'a positive integer'],
    ['pilot-discovery', 'PILOT_STATUS_MAX_WORKERS', '0', 'a positive integer'],
    ['pilot-discovery', 'CASERVER_SELF_SIGNED_CA_RSA_KEY_SIZE', '0', 'a positive integer'],
    ['pilot-discovery', 'CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE', '101', 'an integer from 0 to 100'],
    ['pilot-discovery', 'CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE', '-1', 'an integer from 0 to 100'],
    ['pilot-discovery', 'PILOT_TRACE_SAMPLING', '101', 'a number from 0.0 to 100.0'],
    ['pilot-discovery', 'PILOT_TRACE_SAMPLING', '-0.5', 'a number from 0.0 to 100.0'],
    ['pilot-discovery', 'PILOT_TRACE_SAMPLING', 'NaN', 'a number from 0.0 to 100.0'],
    ['pilot-discovery', 'PILOT_STATUS_QPS', 'fast', 'a number'],
    ['pilot-discovery', 'PILOT_STATUS_QPS', 'Infinity', 'a number'],
    ['pilot-agent', 'SECRET_GRACE_PERIOD_RATIO', '1.5', 'a number from 0.0 to 1.0'],
    ['pilot-agent', 'PROXY_METRICS_PORT', '0', 'a port number from 1 to 65535'],
    ['pilot-agent', 'PROXY_STATUS_PORT', '65536', 'a port number from 1 to 65535'],
    ['meshctl', 'MESHCTL_XDS_PORT', 'http', 'a port number from 1 to 65535'],
    ['pilot-discovery', 'EXTERNAL_CA', 'vault', 'empty, MESHD_RA_ORCH_API or MESHD_RA_MESH_API'],
    ['pilot-discovery', 'JWT_POLICY', 'none', 'third-party-jwt or first-party-jwt'],
    ['meshctl', 'JWT_POLICY', 'Third-Party-JWT', 'third-party-jwt or first-party-jwt'],
    ['meshctl', 'MESHCTL_INSECURE', 'yes', 'true or false'],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '10.0.0.0/8,bogus', `${CIDRS}; "bogus" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '127.0.0.1', `${CIDRS}; "127.0.0.1" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '10.0.0.0/33', `${CIDRS}; "10.0.0.0/33" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', ' fd00::/8 , ::1/129', `${CIDRS}; "::1/129" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '010.0.0.0/8', `${CIDRS}; "010.0.0.0/8" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', 'fe80::%eth0/10', `${CIDRS}; "fe80::%eth0/10" is not one`],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '10.0.0.0/-1', `${CIDRS}; "10.0.0.0/-1" is not one`],
  ])('%s %s=%j', (program, name, raw, expected) => {
    const error = settingsErrorOf(program, { [name]: raw });
    expect(error.message).toBe(`invalid value ${JSON.stringify(raw)} for ${name}: expected ${expected}`);
    expect(error.issues).toEqual([{ name, value: raw, expected }]);
  });

  test.each<[Program, string, string]>([
    ['pilot-discovery', 'PILOT_PUSH_THROTTLE', '1'],
    ['pilot-discovery', 'PILOT_TRACE_SAMPLING', '100'],
    ['pilot-discovery', 'PILOT_TRACE_SAMPLING', '0.0'],
    ['pilot-discovery', 'PILOT_DEBOUNCE_AFTER', '0'],
    ['pilot-discovery', 'CASERVER_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL', '0s'],
    ['pilot-discovery', 'CASERVER_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE', '0'],
    ['pilot-discovery', 'JWT_POLICY', 'first-party-jwt'],
    ['pilot-discovery', 'EXTERNAL_CA', 'MESHD_RA_MESH_API'],
    ['pilot-agent', 'SECRET_GRACE_PERIOD_RATIO', '1'],
    ['pilot-agent', 'PROXY_METRICS_PORT', '65535'],
    ['meshctl', 'MESHCTL_XDS_PORT', '1'],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '0.0.0.0/0'],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', '::/128'],
    ['pilot-discovery', 'BLOCKED_CIDRS_IN_JWKS_URIS', ' 10.0.0.1/8, ,::ffff:127.0.0.0/104,'],
  ])('%s accepts the boundary %s=%j', (program, name, raw) => {
    expect(loadSettings(program, { [name]: raw }).isSet(name as never)).toBe(true);
  });

  test('every bad value is reported in one error, one line each, as a usage error', () => {
    const error = settingsErrorOf('pilot-discovery', {
      PILOT_DEBOUNCE_AFTER: 'fast',
      PILOT_PUSH_THROTTLE: '-3',
      PILOT_TRACE_SAMPLING: '101',
      ENABLE_CA_SERVER: 'yes',
      PILOT_DEBOUNCE_MAX: '2s',
    });
    expect(error.message.split('\n').sort()).toEqual(
      [
        'invalid value "fast" for PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms or 1m0s',
        'invalid value "-3" for PILOT_PUSH_THROTTLE: expected a positive integer',
        'invalid value "101" for PILOT_TRACE_SAMPLING: expected a number from 0.0 to 100.0',
        'invalid value "yes" for ENABLE_CA_SERVER: expected true or false',
      ].sort(),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toBeInstanceOf(MeshError);
    expect(error.exitCode).toBe(2);
    expect(error.name).toBe('SettingsError');
    expect(error.issues.map((issue) => issue.name).sort()).toEqual(['ENABLE_CA_SERVER', 'PILOT_DEBOUNCE_AFTER', 'PILOT_PUSH_THROTTLE', 'PILOT_TRACE_SAMPLING']);
  });

  test('a setting only another program reads is not validated', () => {
    expect(loadSettings('pilot-discovery', { SECRET_TTL: 'soon' }).get('PILOT_DEBOUNCE_AFTER')).toBe(100);
    expect(() => loadSettings('pilot-agent', { SECRET_TTL: 'soon' })).toThrow(SettingsError);
  });
});

describe('the settings object', () => {
  test('is frozen', () => {
    const settings = loadSettings('pilot-discovery', {});
    expect(Object.isFrozen(settings)).toBe(true);
    expect(() => {
      (settings as unknown as { program: string }).program = 'pilot-agent';
    }).toThrow(TypeError);
    expect(settings.program).toBe('pilot-discovery');
  });

  test('describe() returns copies sorted by name', () => {
    const settings = loadSettings('pilot-agent', {});
    const names = settings.describe().map((info) => info.name);
    expect(names).toEqual([...names].sort());
    const first = settings.describe()[0];
    if (first === undefined) throw new Error('no settings');
    first.value = 'changed';
    expect(settings.describe()[0]?.value).not.toBe('changed');
  });

  test('the environment object is read once, at load', () => {
    const env: Record<string, string> = { PILOT_PUSH_THROTTLE: '5' };
    const settings = loadSettings('pilot-discovery', env);
    env['PILOT_PUSH_THROTTLE'] = '9';
    expect(settings.get('PILOT_PUSH_THROTTLE')).toBe(5);
  });

  test('asking for a setting the program does not read throws', () => {
    const discovery = loadSettings('pilot-discovery', {}) as Settings<Program>;
    expect(() => discovery.get('SECRET_TTL' as never)).toThrow('pilot-discovery does not read the setting "SECRET_TTL"');
    const meshctl = loadSettings('meshctl', {}) as Settings<Program>;
    expect(() => meshctl.isSet('ORCH_SERVICE_HOST' as never)).toThrow(MeshError);
  });

  test('get is typed by the setting type and the program', () => {
    const daemon = loadSettings('pilot-discovery', {});
    const debounceMs: number = daemon.get('PILOT_DEBOUNCE_AFTER');
    const caServer: boolean = daemon.get('ENABLE_CA_SERVER');
    const namespace: string = daemon.get('POD_NAMESPACE');
    const sampling: number = daemon.get('PILOT_TRACE_SAMPLING');
    // @ts-expect-error a Duration is a number of milliseconds, not a string
    const wrong: string = daemon.get('PILOT_DEBOUNCE_AFTER');
    // @ts-expect-error a Boolean is not a number
    const wrongBool: number = daemon.get('XDS_AUTH');
    // @ts-expect-error the daemon does not read the agent's SECRET_TTL
    expect(() => daemon.get('SECRET_TTL')).toThrow(MeshError);
    const meshctl = loadSettings('meshctl', {});
    const port: number = meshctl.get('MESHCTL_XDS_PORT');
    // @ts-expect-error meshctl does not read ORCH_SERVICE_HOST
    expect(() => meshctl.get('ORCH_SERVICE_HOST')).toThrow(MeshError);
    // @ts-expect-error not a setting at all
    expect(() => meshctl.isSet('NOT_A_SETTING')).toThrow(MeshError);
    expect([debounceMs, caServer, namespace, sampling, wrong, wrongBool, port]).toEqual([100, true, 'mesh-system', 1, 100, true, 15012]);
  });
});

describe('an underlay (the proxy config’s proxyMetadata)', () => {
  test('fills in what the environment leaves unset, prefixed families included; the environment wins; bad values are refused', () => {
    const base = loadSettings('pilot-agent', { POD_NAMESPACE: 'from-env', MESH_META_NETWORK: 'env-net', SERVICE_ACCOUNT: '' });
    const under = base.withUnderlay({
      POD_NAMESPACE: 'under',
      SERVICE_ACCOUNT: 'vm-sa',
      MESH_META_DNS_CAPTURE: 'true',
      MESH_META_NETWORK: 'under-net',
      MESH_METAJSON_LABELS: '{}',
    });
    expect(under.get('POD_NAMESPACE')).toBe('from-env');
    expect(under.get('SERVICE_ACCOUNT')).toBe('vm-sa');
    expect(under.isSet('SERVICE_ACCOUNT')).toBe(true);
    expect(under.get('MESH_META_DNS_CAPTURE')).toBe(true);
    expect(under.prefixed('MESH_META_')).toEqual({ NETWORK: 'env-net', DNS_CAPTURE: 'true' });
    expect(under.prefixed('MESH_METAJSON_')).toEqual({ LABELS: '{}' });
    expect(base.get('MESH_META_DNS_CAPTURE')).toBe(false);
    expect(() => base.withUnderlay({ SECRET_TTL: 'soon' })).toThrow(SettingsError);
  });
});
