import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { ProbeAction } from './readiness-probe.js';

/** What one probe found: healthy, or why not. */
export type ProbeOutcome = { readonly healthy: true } | { readonly healthy: false; readonly message: string };

const HEALTHY: ProbeOutcome = { healthy: true };
const unhealthy = (message: string): ProbeOutcome => ({ healthy: false, message });

/** Runs one probe against the app, within `timeoutMs`. Never throws. */
export function runProbeAction(action: ProbeAction, timeoutMs: number): Promise<ProbeOutcome> {
  switch (action.kind) {
    case 'http':
      return probeHttp(action, timeoutMs);
    case 'tcp':
      return probeTcp(action.host, action.port, timeoutMs);
    case 'exec':
      return probeExec(action.command, timeoutMs);
  }
}

/** Healthy for a status from 200 to 399, as Kubernetes and the reference count; HTTPS certificates are not checked. */
function probeHttp(action: Extract<ProbeAction, { kind: 'http' }>, timeoutMs: number): Promise<ProbeOutcome> {
  const headers: Record<string, string> = { 'user-agent': 'mesh-probe/1.0' };
  for (const header of action.headers) headers[header.name.toLowerCase()] = header.value;
  const request = action.scheme === 'https' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = request(
      { host: action.host, port: action.port, path: action.path, method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false, agent: false },
      (res) => {
        res.resume();
        const code = res.statusCode ?? 0;
        resolve(code >= 200 && code < 400 ? HEALTHY : unhealthy(`status code was not from [200,400), bad code ${code}`));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no response within ${timeoutMs}ms`)));
    req.on('error', (error) => resolve(unhealthy(error.message)));
    req.end();
  });
}

function probeTcp(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolve(HEALTHY);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(unhealthy(`dial tcp ${host}:${port}: no connection within ${timeoutMs}ms`));
    });
    socket.once('error', (error) => resolve(unhealthy(`dial tcp ${host}:${port}: ${error.message}`)));
  });
}

/** Healthy when the command exits 0; killed when it outlives the timeout. */
function probeExec(command: readonly [string, ...string[]], timeoutMs: number): Promise<ProbeOutcome> {
  const [file, ...args] = command;
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs }, (error) => {
      if (!error) return resolve(HEALTHY);
      if (error.killed) return resolve(unhealthy(`command timeout exceeded: ${error.message}`));
      resolve(unhealthy(typeof error.code === 'number' ? `exit status ${error.code}` : error.message));
    });
  });
}
