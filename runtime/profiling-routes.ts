import { Session } from 'node:inspector/promises';
import { getHeapSnapshot } from 'node:v8';
import type { FastifyInstance } from 'fastify';

/** pprof's default CPU profile length, and a ceiling so one request cannot hold the profiler for ever. */
const DEFAULT_PROFILE_SECONDS = 30;
const MAX_PROFILE_SECONDS = 300;

const PROFILES = [
  ['profile', 'CPU profile (V8 .cpuprofile, ?seconds=N, default 30): opens in Chrome DevTools, Performance panel'],
  ['heap', 'Heap snapshot (V8 .heapsnapshot): opens in Chrome DevTools, Memory panel'],
  ['cmdline', 'The command line invocation of the current program'],
] as const;

/**
 * `--profile`: the reference's `/debug/pprof/` on the debug port, in the runtime's own formats:
 * a V8 CPU profile for N seconds and a heap snapshot, both of which Chrome DevTools opens. They
 * sit behind the debug access check every `/debug/` route goes through (a heap snapshot holds the
 * process's secrets). One CPU profile at a time: the inspector has one profiler.
 */
export function registerProfilingRoutes(app: FastifyInstance, program: string, now: () => Date = () => new Date()): void {
  let profiling = false;
  const stamp = (): string => now().toISOString().replace(/[:.]/g, '-');
  app.get('/debug/pprof/', async (_request, reply) =>
    reply.type('text/plain; charset=utf-8').send(`${PROFILES.map(([name, what]) => `/debug/pprof/${name}\t${what}`).join('\n')}\n`),
  );
  app.get('/debug/pprof/cmdline', async (_request, reply) => reply.type('text/plain; charset=utf-8').send(process.argv.join('\0')));
  app.get('/debug/pprof/profile', async (request, reply) => {
    const raw = (request.query as Record<string, string | undefined>)['seconds'];
    const seconds = raw === undefined || raw === '' ? DEFAULT_PROFILE_SECONDS : Number(raw);
    if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_PROFILE_SECONDS) {
      return reply.code(400).send({ error: `seconds: expected a whole number from 1 to ${MAX_PROFILE_SECONDS}, got "${raw ?? ''}"` });
    }
    if (profiling) return reply.code(409).send({ error: 'a CPU profile is already being taken' });
    profiling = true;
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const { profile } = await session.post('Profiler.stop');
      return reply
        .type('application/json')
        .header('content-disposition', `attachment; filename="${program}-${stamp()}.cpuprofile"`)
        .send(JSON.stringify(profile));
    } finally {
      session.disconnect();
      profiling = false;
    }
  });
  app.get('/debug/pprof/heap', async (request, reply) => {
    const snapshot = getHeapSnapshot();
    // A client that goes away mid-snapshot must not leave the stream (and the server's shutdown) waiting on it.
    request.raw.socket.once('close', () => snapshot.destroy());
    return reply.type('application/json').header('content-disposition', `attachment; filename="${program}-${stamp()}.heapsnapshot"`).send(snapshot);
  });
}
