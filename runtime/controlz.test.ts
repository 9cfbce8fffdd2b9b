import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { FakeClock } from './testing/fake-clock.js';
import { controlZListenHost, newControlZ } from './controlz.js';
import { MeshError, UsageError } from './errors.js';
import type { LoggingControl, ScopeInfo, ScopePatch } from './log/control.js';
import { newNopLogger } from './log/logger.js';
import type { SettingInfo } from './settings-info.js';

/** An in-memory LoggingControl: the scopes as data, changed in place. */
function newFakeLogging(scopes: ScopeInfo[]): LoggingControl & { scopes: Map<string, ScopeInfo> } {
  const byName = new Map(scopes.map((scope) => [scope.name, { ...scope }]));
  return {
    scopes: byName,
    listScopes: () => [...byName.values()].map((scope) => ({ ...scope })),
    getScope: (name) => {
      const scope = byName.get(name);
      return scope ? { ...scope } : undefined;
    },
    setScope: (name: string, patch: ScopePatch) => {
      const scope = byName.get(name);
      if (!scope) throw new MeshError('unknown-scope', `unknown scope ${name}`);
      Object.assign(scope, patch);
      return { ...scope };
    },
  };
}

const SETTINGS: SettingInfo[] = [
  { name: 'PILOT_DEBOUNCE_AFTER', type: 'Duration', default: '100ms', value: '250ms', isSet: true, meaning: 'Quiet period' },
  { name: 'TRUST_DOMAIN', type: 'String', default: 'cluster.local', value: 'cluster.local', isSet: false, meaning: 'SPIFFE trust domain' },
];
const BUILD_INFO = { version: '0.1.0', gitRevision: 'abc123', nodeVersion: process.version, buildStatus: 'Clean', gitTag: '0.1.0' };
const ARGS = ['node', 'pilot-discovery', 'discovery', '--ctrlz_port', '0'];

describe('ControlZ', () => {
  const logging = newFakeLogging([
    { name: 'default', description: 'Unscoped logging messages.', outputLevel: 'info', stackTraceLevel: 'none', logCallers: false },
    { name: 'ads', description: 'ads debugging', outputLevel: 'info', stackTraceLevel: 'none', logCallers: false },
    { name: 'ca', description: 'certificate authority', outputLevel: 'warn', stackTraceLevel: 'none', logCallers: true },
  ]);
  const clock = new FakeClock();
  const controller = new AbortController();
  const server = newControlZ({
    address: '127.0.0.1',
    port: 0,
    logging,
    settings: { describe: () => SETTINGS },
    buildInfo: BUILD_INFO,
    args: ARGS,
    log: newNopLogger(),
    clock,
  });
  let running: Promise<void>;
  let base = '';

  beforeAll(async () => {
    running = server.start(controller.signal);
    await server.waitForReady(AbortSignal.timeout(5000));
    const { host, port } = server.boundAddress();
    base = `http://${host}:${port}`;
  });

  afterAll(async () => {
    controller.abort();
    await running;
  });

  async function getJson(path: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, body: await response.json() };
  }

  async function put(path: string, body: string, contentType = 'application/json'): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${base}${path}`, { method: 'PUT', body, headers: { 'content-type': contentType } });
    return { status: response.status, body: await response.json() };
  }

  test('is an httpServer runnable', () => {
    expect(server.group).toBe('httpServer');
    expect(server.name).toBe('controlz');
  });

  test('GET / is an HTML index linking every topic', async () => {
    const response = await fetch(`${base}/`);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await response.text();
    for (const topic of ['/scopej/', '/settingsj/', '/memj/', '/procj/', '/argsj/', '/versionj/']) {
      expect(html).toContain(`href="${topic}"`);
    }
  });

  test('GET /scopej/ lists the scopes by name in the wire format', async () => {
    const { status, body } = await getJson('/scopej/');
    expect(status).toBe(200);
    expect(body).toEqual([
      { name: 'ads', description: 'ads debugging', output_level: 'info', stack_trace_level: 'none', log_callers: false },
      { name: 'ca', description: 'certificate authority', output_level: 'warn', stack_trace_level: 'none', log_callers: true },
      { name: 'default', description: 'Unscoped logging messages.', output_level: 'info', stack_trace_level: 'none', log_callers: false },
    ]);
    expect((await getJson('/scopej')).body).toEqual(body);
  });

  test('GET /scopej/<scope> shows one scope, and a JSON 404 for an unknown one', async () => {
    expect(await getJson('/scopej/ca')).toEqual({
      status: 200,
      body: { name: 'ca', description: 'certificate authority', output_level: 'warn', stack_trace_level: 'none', log_callers: true },
    });
    expect(await getJson('/scopej/nope')).toEqual({ status: 404, body: { error: 'unknown scope name: nope' } });
  });

  test('PUT /scopej/<scope> changes the levels and returns the new state', async () => {
    const result = await put('/scopej/ads', JSON.stringify({ output_level: 'debug', stack_trace_level: 'error' }));
    expect(result).toEqual({
      status: 200,
      body: { name: 'ads', description: 'ads debugging', output_level: 'debug', stack_trace_level: 'error', log_callers: false },
    });
    expect(logging.scopes.get('ads')).toMatchObject({ outputLevel: 'debug', stackTraceLevel: 'error', logCallers: false });
    expect((await getJson('/scopej/ads')).body).toMatchObject({ output_level: 'debug' });
  });

  test('PUT accepts a GET result back (name and description are ignored)', async () => {
    const { body } = await getJson('/scopej/default');
    const result = await put('/scopej/default', JSON.stringify({ ...(body as object), log_callers: true, description: 'x' }));
    expect(result.status).toBe(200);
    expect(logging.scopes.get('default')).toMatchObject({ logCallers: true, description: 'Unscoped logging messages.' });
  });

  test.each([
    ['{"output_level":"verbose"}', /output_level "verbose".*debug, info, warn, error, fatal, none/],
    ['{"stack_trace_level":3}', /stack_trace_level 3/],
    ['{"log_callers":"yes"}', /log_callers "yes"/],
    ['{"outputLevel":"debug"}', /unknown field "outputLevel"/],
    ['["debug"]', /JSON object/],
    ['"debug"', /JSON object/],
    ['{"output_level":', /JSON/i],
  ])('PUT %s is a 400 naming the problem and changes nothing', async (body, message) => {
    const before = logging.scopes.get('ca');
    const result = await put('/scopej/ca', body);
    expect(result.status).toBe(400);
    expect((result.body as { error: string }).error).toMatch(message);
    expect(logging.scopes.get('ca')).toEqual(before);
  });

  test('PUT on an unknown scope is a 404', async () => {
    expect(await put('/scopej/nope', '{"output_level":"debug"}')).toEqual({
      status: 404,
      body: { error: 'unknown scope name: nope' },
    });
  });

  test('GET /settingsj/ lists the settings in effect', async () => {
    expect(await getJson('/settingsj/')).toEqual({
      status: 200,
      body: [
        { name: 'PILOT_DEBOUNCE_AFTER', type: 'Duration', default: '100ms', value: '250ms', is_set: true, meaning: 'Quiet period' },
        { name: 'TRUST_DOMAIN', type: 'String', default: 'cluster.local', value: 'cluster.local', is_set: false, meaning: 'SPIFFE trust domain' },
      ],
    });
  });

  test('GET /versionj/ and /argsj/ serve the build information and the arguments', async () => {
    expect(await getJson('/versionj/')).toEqual({ status: 200, body: BUILD_INFO });
    expect(await getJson('/argsj/')).toEqual({ status: 200, body: ARGS });
  });

  test('GET /memj/ serves the memory usage and heap statistics', async () => {
    const { status, body } = await getJson('/memj/');
    expect(status).toBe(200);
    const memory = body as Record<string, unknown> & { heap_statistics: Record<string, unknown> };
    for (const field of ['rss', 'heap_total', 'heap_used', 'external', 'array_buffers']) {
      expect(memory[field]).toEqual(expect.any(Number));
    }
    expect(memory.heap_statistics['total_heap_size']).toEqual(expect.any(Number));
    expect(memory.heap_statistics['heap_size_limit']).toEqual(expect.any(Number));
  });

  test('GET /procj/ serves the process information, uptime from the clock', async () => {
    const first = (await getJson('/procj/')).body as Record<string, unknown>;
    expect(first).toMatchObject({ pid: process.pid, ppid: process.ppid, node_version: process.version, wd: process.cwd() });
    expect(first['hostname']).toEqual(expect.any(String));
    expect(first['cpu_usage']).toEqual({ user_microseconds: expect.any(Number), system_microseconds: expect.any(Number) });
    clock.advance(5000);
    const second = (await getJson('/procj/')).body as Record<string, unknown>;
    expect((second['uptime_seconds'] as number) - (first['uptime_seconds'] as number)).toBeCloseTo(5, 6);
    expect(second['start_time']).toBe(first['start_time']);
  });

  test('unknown paths are a JSON 404', async () => {
    expect(await getJson('/envj/')).toEqual({ status: 404, body: { error: 'no such topic: /envj/' } });
  });
});

describe('ControlZ options', () => {
  test('"*" and an empty address mean all interfaces; brackets are dropped', () => {
    expect(controlZListenHost('*')).toBe('0.0.0.0');
    expect(controlZListenHost('')).toBe('0.0.0.0');
    expect(controlZListenHost('localhost')).toBe('localhost');
    expect(controlZListenHost('[::1]')).toBe('::1');
  });

  test.each([-1, 65536, 1.5])('rejects port %s as a usage error', (port) => {
    const create = (): unknown =>
      newControlZ({
        address: 'localhost',
        port,
        logging: newFakeLogging([]),
        settings: { describe: () => [] },
        buildInfo: {},
        args: [],
        log: newNopLogger(),
      });
    expect(create).toThrow(UsageError);
    expect(create).toThrow(/--ctrlz_port/);
  });
});
