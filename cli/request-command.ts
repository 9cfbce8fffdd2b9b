import { Command } from 'commander';
import { MeshError, UsageError } from '../runtime/index.js';
import { ensureNewline } from './version-command.js';
import type { CliIo } from './run-cli.js';

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'];

/** Sends one HTTP request to a local debug endpoint and prints the body; non-2xx fails. */
export async function sendDebugRequest(baseUrl: string, method: string, path: string, body: string | undefined, io: CliIo): Promise<void> {
  const verb = method.toUpperCase();
  if (!METHODS.includes(verb)) {
    throw new UsageError(`invalid method "${method}": expected one of ${METHODS.join(', ')}`);
  }
  const url = new URL(path.startsWith('/') ? path : `/${path}`, baseUrl);
  let response: Response;
  try {
    response = await fetch(url, { method: verb, body: body === undefined ? undefined : body });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new MeshError('debug-request-failed', `request to ${url.href} failed: ${cause?.code ?? cause?.message ?? String(error)}`, { cause: error });
  }
  const text = await response.text();
  if (!response.ok) {
    throw new MeshError('debug-request-failed', `${verb} ${url.href} answered ${response.status} ${response.statusText}: ${text.trim()}`);
  }
  if (text !== '') io.stdout(ensureNewline(text));
}

export function requestCommand(description: string): Command {
  return new Command('request')
    .description(description)
    .argument('<method>', 'HTTP method: GET, POST, PUT, DELETE')
    .argument('<path>', 'path of the endpoint, e.g. /metrics')
    .argument('[body]', 'request body');
}
