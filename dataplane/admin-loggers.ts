/** Envoy's logger names, as `/logging` lists them (the seed's `proxy-config log` set). */
export const ENVOY_LOGGERS = [
  'admin',
  'aws',
  'assert',
  'backtrace',
  'client',
  'config',
  'connection',
  'conn_handler',
  'dubbo',
  'file',
  'filter',
  'forward_proxy',
  'grpc',
  'hc',
  'health_checker',
  'http',
  'http2',
  'hystrix',
  'init',
  'io',
  'jwt',
  'kafka',
  'lua',
  'main',
  'misc',
  'mongo',
  'quic',
  'pool',
  'rbac',
  'redis',
  'router',
  'runtime',
  'stats',
  'secret',
  'tap',
  'testing',
  'thrift',
  'tracing',
  'upstream',
  'udp',
  'wasm',
] as const;

/** Envoy's levels, most verbose first. */
export const ENVOY_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type EnvoyLevel = (typeof ENVOY_LEVELS)[number];

export interface EnvoyLoggers {
  /** `level` sets every logger; a logger name sets that one. Returns an error text, or undefined when applied. */
  set(name: string, level: string): string | undefined;
  /** `active loggers:` and one `  <name>: <level>` line per logger, as Envoy prints it. */
  text(): string;
}

/**
 * The data plane's loggers as Envoy's admin API exposes them. The embedded data plane has one log
 * output, so it logs at the most verbose level any logger asks for: nothing asked for is lost.
 */
export function newEnvoyLoggers(initial: string, apply: (level: EnvoyLevel) => void): EnvoyLoggers {
  const start: EnvoyLevel = isLevel(initial) ? initial : 'warning';
  const levels = new Map<string, EnvoyLevel>(ENVOY_LOGGERS.map((name) => [name, start]));
  const applyMostVerbose = (): void => apply(ENVOY_LEVELS[Math.min(...[...levels.values()].map((level) => ENVOY_LEVELS.indexOf(level)))] ?? start);
  return {
    set(name, level) {
      if (!isLevel(level)) return `error: unknown logger level "${level}"; one of ${ENVOY_LEVELS.join(', ')}`;
      if (name === 'level') for (const logger of levels.keys()) levels.set(logger, level);
      else if (levels.has(name)) levels.set(name, level);
      else return `error: unknown logger name "${name}"`;
      applyMostVerbose();
      return undefined;
    },
    text() {
      return `active loggers:\n${[...levels]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, level]) => `  ${name}: ${level}\n`)
        .join('')}`;
    },
  };
}

function isLevel(level: string): level is EnvoyLevel {
  return (ENVOY_LEVELS as readonly string[]).includes(level);
}
