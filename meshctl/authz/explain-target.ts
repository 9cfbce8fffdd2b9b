import { readFile } from 'node:fs/promises';
import type { V1Pod } from '@kubernetes/client-node';
import type { WorkloadEntry } from '../../crds/index.js';
import { UsageError } from '../../runtime/index.js';
import type { EnvoyConfigDump } from '../proxyconfig/config-dump.js';
import { clientTransportTo } from './client-transport.js';
import type { ExplainSource } from './explain.js';

export interface SourceFlags {
  readonly from?: string;
  readonly sourcePrincipal?: string;
  readonly plaintext?: boolean;
  readonly trustDomain: string;
}

/** A `--from` client as the source resolution needs it: a pod or a VM. */
export interface SourceWorkload {
  /** Whether it has a proxy: a pod without one sends plain text. */
  readonly meshed: boolean;
  readonly namespace: string;
  readonly serviceAccount: string;
  /** Its proxy's config dump: its own clusters decide how it calls the destination. */
  readonly dump: () => Promise<EnvoyConfigDump>;
}

/**
 * Who sends the request: `--source-principal` (mutual TLS with that identity), `--from <pod or VM>`
 * (its service account's identity when its proxy connects to the destination with mutual TLS, plain
 * text when it has no proxy or its proxy sends plain text), or
 * `--plaintext` (the default: a client outside the mesh). At most one.
 */
export async function resolveSource(
  flags: SourceFlags,
  resolveClient: (target: string) => Promise<SourceWorkload>,
  destination?: { readonly address: string; readonly port: number },
): Promise<ExplainSource> {
  const given = [flags.from, flags.sourcePrincipal, flags.plaintext ? true : undefined].filter((v) => v !== undefined);
  if (given.length > 1) throw new UsageError('--from, --source-principal and --plaintext are exclusive: give one', { exitCode: 64 });
  if (flags.sourcePrincipal !== undefined) {
    if (!/^spiffe:\/\/[^/]+\/ns\/[^/]+\/sa\/[^/]+$/.test(flags.sourcePrincipal))
      throw new UsageError(`--source-principal ${flags.sourcePrincipal}: want spiffe://<trust domain>/ns/<namespace>/sa/<service account>`, { exitCode: 64 });
    return { kind: 'mtls', principal: flags.sourcePrincipal };
  }
  if (flags.from !== undefined) {
    const client = await resolveClient(flags.from);
    if (!client.meshed) return { kind: 'plaintext' };
    // The client's own proxy decides: auto mutual TLS by the endpoint's labels, or a DestinationRule's mode.
    // An endpoint no cluster of the client holds goes through the passthrough cluster, in plain text.
    if (destination && clientTransportTo(await client.dump(), destination.address, destination.port) !== 'mtls') return { kind: 'plaintext' };
    return { kind: 'mtls', principal: `spiffe://${flags.trustDomain}/ns/${client.namespace}/sa/${client.serviceAccount}` };
  }
  return { kind: 'plaintext' };
}

/** `--header k=v` (repeatable) and `--token`/`--token-file` as the request's lower-case headers. */
export async function requestHeaders(flags: { header?: readonly string[]; token?: string; tokenFile?: string }): Promise<Record<string, string>> {
  if (flags.token !== undefined && flags.tokenFile !== undefined) throw new UsageError('--token and --token-file are exclusive', { exitCode: 64 });
  const headers: Record<string, string> = {};
  for (const pair of flags.header ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--header ${pair}: want name=value`, { exitCode: 64 });
    const name = pair.slice(0, at).trim().toLowerCase();
    headers[name] = headers[name] === undefined ? pair.slice(at + 1) : `${headers[name]},${pair.slice(at + 1)}`;
  }
  const token = flags.tokenFile !== undefined ? (await readFile(flags.tokenFile, 'utf8')).trim() : flags.token;
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  return headers;
}

/** The port a request to the pod goes to: `--port`, else the first container port, else 80. */
export function targetPort(pod: V1Pod | undefined, flag: number | undefined): number {
  if (flag !== undefined) return flag;
  return pod?.spec?.containers.flatMap((c) => c.ports ?? []).find((p) => (p.protocol ?? 'TCP') === 'TCP')?.containerPort ?? 80;
}

/** The port a request to a VM goes to: `--port`, else the lowest port its WorkloadEntry names, else 80. */
export function entryPort(entry: WorkloadEntry | undefined, flag: number | undefined): number {
  if (flag !== undefined) return flag;
  return Object.values(entry?.spec.ports ?? {}).sort((a, b) => a - b)[0] ?? 80;
}
