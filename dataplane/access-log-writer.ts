import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from '../runtime/index.js';
import { errorMessage } from '../runtime/index.js';
import type { AccessLogEntry, AccessLogSink } from './decisions/index.js';

/** Where the access logs of every listener go: one append stream per file, shared by the listeners that name it. */
export interface AccessLogWriter {
  write(sinks: readonly AccessLogSink[], entry: AccessLogEntry): void;
  close(): Promise<void>;
}

export function newAccessLogWriter(log: Logger): AccessLogWriter {
  const files = new Map<string, WriteStream>();
  const failed = new Set<string>();
  const append = (path: string, line: string): void => {
    if (path === '/dev/stdout') return void process.stdout.write(line);
    if (path === '/dev/stderr') return void process.stderr.write(line);
    if (failed.has(path)) return;
    let stream = files.get(path);
    if (!stream) {
      stream = createWriteStream(path, { flags: 'a' });
      stream.once('error', (error) => {
        // Logged once per file; its lines are dropped, as a logger that cannot write drops them.
        failed.add(path);
        files.delete(path);
        log.error({ path, error: errorMessage(error) }, 'access log file cannot be written');
      });
      files.set(path, stream);
    }
    stream.write(line);
  };
  return {
    write(sinks, entry) {
      for (const sink of sinks) append(sink.path, sink.format(entry));
    },
    async close() {
      await Promise.all([...files.values()].map((stream) => new Promise<void>((resolve) => stream.end(resolve))));
      files.clear();
    },
  };
}
