/**
 * The xDS benchmark's baselines: raw grpc-js server streams carrying the same bytes as the daemon,
 * to the same number of clients (the simulated proxies' child process), measured in the same run.
 */
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { performance } from 'node:perf_hooks';
import type { ProxiesCommand, ProxiesReport } from './xds-proxies.js';

/** The child process of simulated clients, as the benchmark drives it. */
export interface ProxiesChild {
  next(kind: ProxiesReport['kind']): Promise<ProxiesReport>;
  send(command: ProxiesCommand): void;
}

const now = (): number => performance.timeOrigin + performance.now();

type Handler = (call: ServerWritableStream<Buffer, Buffer>) => void;

async function startRawServer(handler: Handler): Promise<{ server: Server; port: number }> {
  const server = new Server({ 'grpc.max_concurrent_streams': 100_000 });
  const identity = (value: Buffer): Buffer => value;
  server.addService(
    {
      Stream: {
        path: '/mesh.bench.Fanout/Stream',
        requestStream: false,
        responseStream: true,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    { Stream: handler },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { server, port };
}

/**
 * Bytes per CPU-second of a raw fan-out: each of `count` new streams receives `bytesPerClient` in
 * four messages, as the storm's clients receive their config.
 */
export async function rawFanoutBytesPerCpuSecond(child: ProxiesChild, count: number, bytesPerClient: number): Promise<number> {
  const chunk = Buffer.alloc(Math.max(1, Math.floor(bytesPerClient / 4)), 7);
  const { server, port } = await startRawServer((call) => {
    for (let i = 0; i < 4; i++) call.write(chunk);
    call.end();
  });
  const cpuBefore = process.cpuUsage();
  const done = child.next('fanout-done');
  child.send({ cmd: 'fanout', count, port });
  const report = (await done) as Extract<ProxiesReport, { kind: 'fanout-done' }>;
  const cpu = process.cpuUsage(cpuBefore);
  server.forceShutdown();
  return report.bytes / ((cpu.user + cpu.system) / 1e6);
}

/**
 * The time a raw grpc-js server takes to get one message of each size to `count` streams already
 * open (median of `rounds`): what an endpoint push of those bytes costs without any xDS work.
 */
export async function rawPushTimes(child: ProxiesChild, count: number, sizes: readonly number[], rounds = 5): Promise<number[]> {
  const calls: ServerWritableStream<Buffer, Buffer>[] = [];
  const { server, port } = await startRawServer((call) => void calls.push(call));
  child.send({ cmd: 'fanout-open', count, port });
  const deadline = Date.now() + 60_000;
  while (calls.length < count) {
    if (Date.now() > deadline) throw new Error(`only ${calls.length} of ${count} fan-out streams opened`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const medians: number[] = [];
  for (const size of sizes) {
    const message = Buffer.alloc(Math.max(1, Math.round(size)), 7);
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const done = child.next('fanout-round');
      const started = now();
      for (const call of calls) call.write(message);
      times.push(((await done) as Extract<ProxiesReport, { kind: 'fanout-round' }>).doneAt - started);
    }
    times.sort((a, b) => a - b);
    medians.push(times[Math.floor(times.length / 2)] ?? NaN);
  }
  for (const call of calls) call.end();
  server.forceShutdown();
  return medians;
}
