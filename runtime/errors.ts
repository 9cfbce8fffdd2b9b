import { types } from 'node:util';
import type { MeshErrorCode } from './error-codes.js';

/**
 * The one error base class of the project. Errors carry data (a stable `code` of the catalogue in
 * error-codes.ts, a `cause`); the edges (CLI, gRPC, webhook) decide how to render them.
 */
export class MeshError<Code extends MeshErrorCode = MeshErrorCode> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** One problem of an invalid spec, as validation reports it: where (`spec.rules[0].from`, '' for the whole) and what. */
export interface TerminalIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * A reconcile error that retrying cannot fix (an invalid spec): logged and counted, never requeued.
 * It keeps, as data, the validation issues that made it and the error it came from.
 */
export class TerminalError extends MeshError<'terminal'> {
  readonly issues: readonly TerminalIssue[];

  constructor(message: string, options?: { cause?: unknown; issues?: readonly TerminalIssue[] }) {
    super('terminal', message, options);
    this.issues = options?.issues ?? [];
  }
}

/**
 * Bad user input (a flag, a setting, an input file): the CLI prints it and exits with code 2, or
 * the code given (meshctl's install family uses the reference's sysexits: 64 for usage).
 */
export class UsageError extends MeshError<'usage'> {
  readonly exitCode: number;

  constructor(message: string, options?: { cause?: unknown; exitCode?: number }) {
    super('usage', message, options);
    this.exitCode = options?.exitCode ?? 2;
  }
}

/**
 * A command's verdict rather than a failure (`manifest diff` found differences): the CLI exits
 * with the code and prints nothing more, the output already said why.
 */
export class ExitStatus extends MeshError<'exit-status'> {
  constructor(readonly exitCode: number) {
    super('exit-status', `exit status ${exitCode}`);
  }
}

/** Errors from another realm (a VM context, a worker) fail `instanceof Error`; they are still errors. */
function isError(value: unknown): value is Error {
  return value instanceof Error || types.isNativeError(value);
}

/** What to say about a thrown value, for logs and messages: its message, or its text when it is no error. */
export function errorMessage(error: unknown): string {
  return isError(error) ? error.message : String(error);
}

/**
 * The string `code` a thrown value carries: a Node.js system error's (`ENOENT`, `ECONNREFUSED`…)
 * or a `MeshError`'s catalogue code; undefined when it has none. What `(error as
 * NodeJS.ErrnoException).code` said, without the cast.
 */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}
