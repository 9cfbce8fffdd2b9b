import type { IncomingMessage, ServerResponse } from 'node:http';
import { MeshError, errorMessage } from './errors.js';
import type { HealthCheck } from './runnable.js';

export type HealthKind = 'liveness' | 'readiness';

export interface HealthFailure {
  name: string;
  reason: string;
}

export interface HealthReport {
  healthy: boolean;
  failures: HealthFailure[];
}

/** Named liveness and readiness checks; every check runs on each `check` call. */
export interface HealthChecks {
  addLivenessCheck(name: string, check: HealthCheck): void;
  addReadinessCheck(name: string, check: HealthCheck): void;
  check(kind: HealthKind): Promise<HealthReport>;
}

export function newHealthChecks(): HealthChecks {
  const checks: Record<HealthKind, Map<string, HealthCheck>> = { liveness: new Map(), readiness: new Map() };

  const add = (kind: HealthKind, name: string, check: HealthCheck): void => {
    if (checks[kind].has(name)) {
      throw new MeshError('duplicate-health-check', `${kind} check ${name} is already registered`);
    }
    checks[kind].set(name, check);
  };

  return {
    addLivenessCheck: (name, check) => add('liveness', name, check),
    addReadinessCheck: (name, check) => add('readiness', name, check),

    async check(kind) {
      const entries = [...checks[kind]];
      const outcomes = await Promise.all(
        entries.map(async ([name, check]): Promise<HealthFailure | undefined> => {
          try {
            await check();
            return undefined;
          } catch (error) {
            return { name, reason: errorMessage(error) };
          }
        }),
      );
      const failures = outcomes.filter((f): f is HealthFailure => f !== undefined);
      return { healthy: failures.length === 0, failures };
    },
  };
}

/**
 * A plain node handler for a health endpoint: 200 `ok`, or 503 listing each failing check as
 * `[-]name failed: reason`. Works in `http.createServer` and in fastify (`reply.hijack()` first,
 * then pass `request.raw`, `reply.raw`).
 */
export function healthHttpHandler(checks: HealthChecks, kind: HealthKind): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const report = await checks.check(kind);
    const body = report.healthy ? 'ok' : report.failures.map((f) => `[-]${f.name} failed: ${f.reason}`).join('\n') + `\n${kind} check failed`;
    res.writeHead(report.healthy ? 200 : 503, {
      'content-type': 'text/plain; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}
