import { closeSync, openSync, writeSync } from 'node:fs';
import { MeshError } from '../errors.js';

/** Where encoded entries go. Writes are synchronous so that nothing is lost when the process exits. */
export interface LogSink {
  readonly name: string;
  /** A standard stream outlives close(); a file does not. */
  readonly kind: 'stream' | 'file';
  write(text: string): void;
  close(): void;
}

/** What a standard stream needs to be for logging: `process.stdout` or a test double. */
export interface LogStream {
  write(text: string): unknown;
}

export function newStreamSink(name: string, stream: LogStream): LogSink {
  return {
    name,
    kind: 'stream',
    write: (text) => {
      stream.write(text);
    },
    close: () => undefined,
  };
}

/** A file opened for appending; throws when it cannot be opened. */
export function newFileSink(path: string): LogSink {
  let fd: number | undefined = openSync(path, 'a', 0o644);
  return {
    name: path,
    kind: 'file',
    write: (text) => {
      if (fd === undefined) return;
      writeAll(fd, text);
    },
    close: () => {
      if (fd === undefined) return;
      const open = fd;
      fd = undefined;
      closeSync(open);
    },
  };
}

/** writeSync may write less than asked (a full disk, a signal); loop until all bytes are out. */
export function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let offset = 0;
  while (offset < bytes.length) {
    const written = writeSync(fd, bytes, offset, bytes.length - offset);
    if (written <= 0) throw new MeshError('log-write-failed', 'write made no progress');
    offset += written;
  }
}
