import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { errorCode, errorMessage, MeshError } from '../../runtime/index.js';
import type { WebhookClientConfig } from './webhook-configuration.js';

/**
 * Where the double dials a webhook's `clientConfig.service`: tests and the local mesh map services
 * to loopback listeners. `undefined` when the service is unknown.
 */
export type WebhookServiceResolver = (namespace: string, name: string, port: number) => { host: string; port: number } | undefined;

/** A failed call, worded as kube's `failed to call webhook: …` reason. */
export class WebhookCallError extends MeshError<'webhook-call'> {
  constructor(message: string) {
    super('webhook-call', message);
  }
}

interface Target {
  /** The URL as kube prints it in errors, `?timeout=` included. */
  displayUrl: string;
  host: string;
  port: number;
  path: string;
  /** The TLS server name; none for an IP address, which Node then checks against the IP SANs. */
  servername: string | undefined;
}

/** POSTs `body` over HTTPS verified against the webhook's CA bundle; resolves with the decoded JSON answer. */
export async function postToWebhook(
  config: WebhookClientConfig,
  body: unknown,
  timeoutSeconds: number,
  resolveService: WebhookServiceResolver | undefined,
): Promise<unknown> {
  const target = targetOf(config, timeoutSeconds, resolveService);
  const payload = JSON.stringify(body);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = httpsRequest({
      host: target.host,
      port: target.port,
      path: target.path,
      method: 'POST',
      agent: false,
      ...(config.caPem ? { ca: config.caPem } : {}),
      ...(target.servername ? { servername: target.servername } : {}),
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(payload) },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, timeoutSeconds * 1000);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      const why = timedOut ? 'context deadline exceeded' : transportReason(err, target);
      reject(new WebhookCallError(`failed to call webhook: Post "${target.displayUrl}": ${why}`));
    };
    req.on('error', fail);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', fail);
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.end(payload);
  });
  if (status < 200 || status > 299) {
    throw new WebhookCallError(`failed to call webhook: the server responded with the status code ${status} but did not return more information`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new WebhookCallError(`failed to call webhook: couldn't decode the response: ${errorMessage(err)}`);
  }
}

function targetOf(config: WebhookClientConfig, timeoutSeconds: number, resolveService: WebhookServiceResolver | undefined): Target {
  const timeout = `timeout=${timeoutSeconds}s`;
  if (config.url !== undefined) {
    const url = new URL(config.url);
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const path = `${url.pathname}${url.search ? `${url.search}&` : '?'}${timeout}`;
    return {
      displayUrl: `${url.origin}${path}`,
      host,
      port: url.port ? Number(url.port) : 443,
      path,
      servername: isIP(host) ? undefined : host,
    };
  }
  const service = config.service;
  if (!service) throw new WebhookCallError('failed to call webhook: the webhook has neither clientConfig.url nor clientConfig.service');
  const servername = `${service.name}.${service.namespace}.svc`;
  const path = `${service.path.startsWith('/') ? '' : '/'}${service.path}?${timeout}`;
  const displayUrl = `https://${servername}:${service.port}${path}`;
  const endpoint = resolveService?.(service.namespace, service.name, service.port);
  if (!endpoint) throw new WebhookCallError(`failed to call webhook: Post "${displayUrl}": service "${service.name}" not found`);
  return { displayUrl, host: endpoint.host, port: endpoint.port, path, servername };
}

/** Node's socket and TLS errors in the words of Go's HTTP client, which kube's messages carry. */
function transportReason(err: Error, target: Target): string {
  const code = errorCode(err) ?? '';
  const address = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  if (code === 'ECONNREFUSED') return `dial tcp ${address}: connect: connection refused`;
  if (code === 'ECONNRESET') return `read tcp ${address}: read: connection reset by peer`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `tls: failed to verify certificate: x509: ${err.message}`;
  if (/CERT|SIGNATURE|ISSUER/.test(code)) return `tls: failed to verify certificate: x509: certificate signed by unknown authority (${err.message})`;
  return err.message;
}
