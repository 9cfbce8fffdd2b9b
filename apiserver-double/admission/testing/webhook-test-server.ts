/** A loopback HTTPS admission webhook for the admission chain's tests. */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { certificateAuthority, signedCertificate } from '../../../testing/openssl.js';

export type JsonObject = Record<string, unknown>;

/** What a path answers: an AdmissionReview response (uid and apiVersion mirrored unless given), raw HTTP, or nothing ever. */
export type WebhookAnswer =
  { allowed: boolean; status?: JsonObject; patch?: unknown[]; warnings?: string[]; uid?: string } | { httpStatus: number; body: string } | 'hang';

export interface ReceivedReview {
  /** The request path without its query. */
  path: string;
  query: string;
  review: JsonObject;
}

export interface WebhookTestServer {
  /** `https://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The base64 PEM of the CA that signed the server's certificate (DNS `<service>.<namespace>.svc`, IP 127.0.0.1). */
  caBundle: string;
  /** The base64 PEM of a CA that did not sign it. */
  strangerCaBundle: string;
  /** Every review received, oldest first. */
  received: ReceivedReview[];
  /** Reviews received on a path. */
  reviewsAt(path: string): JsonObject[];
  answer(path: string, answer: (request: JsonObject) => WebhookAnswer): void;
  close(): Promise<void>;
}

export async function startWebhookTestServer(dir: string, serviceDnsName: string): Promise<WebhookTestServer> {
  const ca = await certificateAuthority(dir, 'webhook-ca');
  const stranger = await certificateAuthority(dir, 'stranger-ca');
  const leaf = await signedCertificate(dir, 'webhook', `DNS:${serviceDnsName},IP:127.0.0.1`, ca);
  const answers = new Map<string, (request: JsonObject) => WebhookAnswer>();
  const received: ReceivedReview[] = [];
  const hanging = new Set<ServerResponse>();

  const handle = (req: IncomingMessage, res: ServerResponse, text: string): void => {
    const url = new URL(req.url ?? '/', 'https://webhook.invalid');
    const review = JSON.parse(text) as JsonObject;
    received.push({ path: url.pathname, query: url.search, review });
    const request = (review['request'] ?? {}) as JsonObject;
    const answer = answers.get(url.pathname)?.(request) ?? { allowed: true };
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    if ('httpStatus' in answer) {
      res.writeHead(answer.httpStatus, { 'Content-Type': 'application/json' }).end(answer.body);
      return;
    }
    const { patch, uid, ...rest } = answer;
    const response = {
      uid: uid ?? request['uid'],
      ...rest,
      ...(patch ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } : {}),
    };
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ apiVersion: review['apiVersion'], kind: 'AdmissionReview', response }));
  };

  const server = createServer({ key: await readFile(leaf.keyFile), cert: await readFile(leaf.certFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const base64File = async (file: string): Promise<string> => (await readFile(file)).toString('base64');
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    caBundle: await base64File(ca.certFile),
    strangerCaBundle: await base64File(stranger.certFile),
    received,
    reviewsAt: (path) => received.filter((r) => r.path === path).map((r) => r.review),
    answer: (path, answer) => answers.set(path, answer),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A loopback port nothing listens on (taken and given back). */
export async function closedPort(): Promise<number> {
  const probe = createTcpServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A Mutating- or ValidatingWebhookConfiguration with one webhook per entry, created over plain HTTP. */
export async function configureWebhooks(apiServerUrl: string, phase: 'mutating' | 'validating', name: string, webhooks: JsonObject[]): Promise<void> {
  const kind = phase === 'mutating' ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration';
  const response = await fetch(`${apiServerUrl}/apis/admissionregistration.k8s.io/v1/${phase}webhookconfigurations`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name }, webhooks }),
  });
  if (response.status !== 201) throw new Error(`creating ${kind} ${name}: ${response.status} ${await response.text()}`);
}

/** Deletes every webhook configuration. */
export async function removeWebhookConfigurations(apiServerUrl: string): Promise<void> {
  for (const phase of ['mutating', 'validating']) {
    const response = await fetch(`${apiServerUrl}/apis/admissionregistration.k8s.io/v1/${phase}webhookconfigurations`, { method: 'DELETE' });
    if (response.status !== 200) throw new Error(`deleting the ${phase} webhook configurations: ${response.status}`);
  }
}

/** A webhook entry: `rules` for configmaps on CREATE and UPDATE unless given, sideEffects None, failurePolicy Fail. */
export function webhookEntry(name: string, clientConfig: JsonObject, extra: JsonObject = {}): JsonObject {
  return {
    name,
    clientConfig,
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    ...extra,
  };
}
