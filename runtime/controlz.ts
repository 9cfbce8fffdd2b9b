import { hostname, tmpdir } from 'node:os';
import { getHeapStatistics } from 'node:v8';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { newRealClock, type Clock } from './clock.js';
import { UsageError } from './errors.js';
import { ALL_INTERFACES } from './listen-address.js';
import type { LoggingControl, ScopeInfo, ScopePatch } from './log/control.js';
import { LOG_LEVELS, type Logger, type LogLevel } from './log/logger.js';
import { newFastifyRunnable, type HttpServerRunnable } from './http-server.js';
import type { SettingInfo } from './settings-info.js';

export interface ControlZOptions {
  /** `--ctrlz_address`: an IP or host name; `*` (or empty) means all interfaces. */
  address: string;
  /** `--ctrlz_port`; 0 asks for a free port. */
  port: number;
  logging: LoggingControl;
  settings: { describe(): SettingInfo[] };
  buildInfo: Record<string, string>;
  args: readonly string[];
  log: Logger;
  clock?: Clock;
}

/** A logging scope on the wire, in the reference's ControlZ field names. */
export interface ScopeJson {
  name: string;
  description: string;
  output_level: LogLevel;
  stack_trace_level: LogLevel;
  log_callers: boolean;
}

export interface SettingJson {
  name: string;
  type: string;
  default: string;
  value: string;
  is_set: boolean;
  meaning: string;
}

const TOPICS = [
  { path: '/scopej/', title: 'Logging Scopes' },
  { path: '/settingsj/', title: 'Settings' },
  { path: '/memj/', title: 'Memory Usage' },
  { path: '/procj/', title: 'Process Info' },
  { path: '/argsj/', title: 'Command-Line Arguments' },
  { path: '/versionj/', title: 'Version Info' },
] as const;

/**
 * The ControlZ introspection server (`--ctrlz_address`:`--ctrlz_port`, default localhost:9876):
 * JSON topics for logging scopes (read and change), settings in effect, memory, process,
 * arguments and version.
 */
export function newControlZ(options: ControlZOptions): HttpServerRunnable {
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
    throw new UsageError(`invalid --ctrlz_port ${options.port}: want a number from 0 to 65535`);
  }
  const clock = options.clock ?? newRealClock();
  const processStartMs = clock.now() - process.uptime() * 1000;
  return newFastifyRunnable({
    name: 'controlz',
    host: controlZListenHost(options.address),
    port: options.port,
    log: options.log,
    configure: (app) => configureRoutes(app, options, clock, processStartMs),
  });
}

/** The host ControlZ binds: `*` or empty means all interfaces, as in the reference. */
export function controlZListenHost(address: string): string {
  if (address === '*' || address === '') return ALL_INTERFACES;
  if (address.startsWith('[') && address.endsWith(']')) return address.slice(1, -1);
  return address;
}

function configureRoutes(app: FastifyInstance, options: ControlZOptions, clock: Clock, processStartMs: number): void {
  const { logging } = options;

  app.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) options.log.error({ error: error.message }, 'controlz request failed');
    return sendError(reply, status, error.message);
  });
  app.setNotFoundHandler((request, reply) => sendError(reply, 404, `no such topic: ${request.url}`));

  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(indexPage(options.buildInfo)));

  app.get('/scopej/', async () =>
    logging
      .listScopes()
      .map(toScopeJson)
      .sort((a, b) => a.name.localeCompare(b.name)),
  );
  app.get<{ Params: { scope: string } }>('/scopej/:scope', async (request, reply) => {
    const scope = logging.getScope(request.params.scope);
    if (!scope) return sendError(reply, 404, `unknown scope name: ${request.params.scope}`);
    return toScopeJson(scope);
  });
  app.put<{ Params: { scope: string } }>('/scopej/:scope', async (request, reply) => {
    const name = request.params.scope;
    if (!logging.getScope(name)) return sendError(reply, 404, `unknown scope name: ${name}`);
    const parsed = parseScopePatch(request.body);
    if (!parsed.ok) return sendError(reply, 400, parsed.message);
    const updated = toScopeJson(logging.setScope(name, parsed.patch));
    options.log.info({ changedScope: name, ...parsed.patch }, 'logging scope changed');
    return updated;
  });

  app.get('/settingsj/', async () => options.settings.describe().map(toSettingJson));
  app.get('/versionj/', async () => options.buildInfo);
  app.get('/argsj/', async () => [...options.args]);
  app.get('/memj/', async () => memoryInfo());
  app.get('/procj/', async () => processInfo(clock, processStartMs));
}

function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: message });
}

function toScopeJson(scope: ScopeInfo): ScopeJson {
  return {
    name: scope.name,
    description: scope.description,
    output_level: scope.outputLevel,
    stack_trace_level: scope.stackTraceLevel,
    log_callers: scope.logCallers,
  };
}

function toSettingJson(setting: SettingInfo): SettingJson {
  return {
    name: setting.name,
    type: setting.type,
    default: setting.default,
    value: setting.value,
    is_set: setting.isSet,
    meaning: setting.meaning,
  };
}

type ParsedPatch = { ok: true; patch: ScopePatch } | { ok: false; message: string };

/** A PUT body: any of output_level, stack_trace_level, log_callers; name and description are ignored. */
function parseScopePatch(body: unknown): ParsedPatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, message: 'request body must be a JSON object' };
  }
  const patch: ScopePatch = {};
  for (const [field, value] of Object.entries(body)) {
    switch (field) {
      case 'output_level':
      case 'stack_trace_level': {
        if (typeof value !== 'string' || !(LOG_LEVELS as readonly string[]).includes(value)) {
          return { ok: false, message: `invalid ${field} ${JSON.stringify(value)}: want one of ${LOG_LEVELS.join(', ')}` };
        }
        patch[field === 'output_level' ? 'outputLevel' : 'stackTraceLevel'] = value as LogLevel;
        break;
      }
      case 'log_callers':
        if (typeof value !== 'boolean') {
          return { ok: false, message: `invalid log_callers ${JSON.stringify(value)}: want true or false` };
        }
        patch.logCallers = value;
        break;
      case 'name':
      case 'description':
        break;
      default:
        return { ok: false, message: `unknown field ${JSON.stringify(field)}: want output_level, stack_trace_level or log_callers` };
    }
  }
  return { ok: true, patch };
}

function memoryInfo(): Record<string, unknown> {
  const usage = process.memoryUsage();
  return {
    rss: usage.rss,
    heap_total: usage.heapTotal,
    heap_used: usage.heapUsed,
    external: usage.external,
    array_buffers: usage.arrayBuffers,
    heap_statistics: getHeapStatistics(),
  };
}

function processInfo(clock: Clock, processStartMs: number): Record<string, unknown> {
  const cpu = process.cpuUsage();
  return {
    pid: process.pid,
    ppid: process.ppid,
    uid: process.getuid?.(),
    gid: process.getgid?.(),
    euid: process.geteuid?.(),
    egid: process.getegid?.(),
    groups: process.getgroups?.(),
    wd: process.cwd(),
    hostname: hostname(),
    tempdir: tmpdir(),
    node_version: process.version,
    platform: process.platform,
    arch: process.arch,
    start_time: new Date(processStartMs).toISOString(),
    uptime_seconds: (clock.now() - processStartMs) / 1000,
    cpu_usage: { user_microseconds: cpu.user, system_microseconds: cpu.system },
  };
}

function indexPage(buildInfo: Record<string, string>): string {
  const links = TOPICS.map((topic) => `<li><a href="${topic.path}">${topic.title}</a></li>`).join('\n');
  const version = escapeHtml(buildInfo['version'] ?? 'unknown');
  return `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>ControlZ</title></head>
<body><h1>ControlZ</h1><p>Introspection for this mesh process (version ${version}).</p>
<ul>
${links}
</ul></body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
