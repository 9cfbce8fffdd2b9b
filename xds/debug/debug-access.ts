import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../runtime/index.js';
import { authenticateStream, parseWorkloadIdentity, type XdsAuthenticator } from '../xds-auth.js';

/**
 * Who reads the daemon's debug views: the system namespace (or a caller on the daemon's own
 * machine) reads all of them; any other authenticated workload only the config dumps of proxies
 * of its own namespaces.
 */
export type DebugReader = { readonly all: true } | { readonly all: false; readonly namespaces: ReadonlySet<string> };

export const ALL_DEBUG: DebugReader = { all: true };

/** The message for a view a reader may not see, the same whether the thing exists or not. */
export const DEBUG_NOT_AVAILABLE = 'the debug info is not available for the current identity';

/** What authenticated identities may read; undefined for none (an unauthenticated caller reads nothing). */
export function debugReaderFor(identities: readonly string[] | undefined, systemNamespace: string): DebugReader | undefined {
  if (identities === undefined || identities.length === 0) return undefined;
  const namespaces = new Set<string>();
  for (const identity of identities) {
    const namespace = parseWorkloadIdentity(identity)?.namespace;
    if (namespace === systemNamespace) return ALL_DEBUG;
    if (namespace !== undefined) namespaces.add(namespace);
  }
  return { all: false, namespaces };
}

/** Whether a reader may see the config dump of a proxy of `namespace` (undefined: no such proxy). */
export function mayReadConfigDump(reader: DebugReader, namespace: string | undefined): boolean {
  return reader.all || (namespace !== undefined && reader.namespaces.has(namespace));
}

export interface DebugAccessOptions {
  readonly authenticators: readonly XdsAuthenticator[];
  readonly systemNamespace: string;
  readonly log: Logger;
  /** Which callers are on the daemon's own machine and read everything; default: loopback addresses. */
  readonly isLocalCaller?: (address: string | undefined) => boolean;
}

export interface DebugAccess {
  /** Checks every `/debug/` request of the app before its route runs. */
  install(app: FastifyInstance): void;
  /** The reader the check admitted for a request (every route under `/debug/` has one). */
  readerOf(request: FastifyRequest): DebugReader;
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const ip = address.startsWith('::ffff:') ? address.slice(7) : address;
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/** Paths an authenticated workload outside the system namespace may ask for (filtered by namespace there). */
const WORKLOAD_PATHS = new Set(['/debug/config_dump']);

/**
 * The debug endpoints on the daemon's HTTP ports, as the reference after its 2026 advisory: a
 * caller on the loopback interface reads everything; anyone else authenticates as xDS streams do
 * (a bearer token) or gets 401, reads everything from the system namespace, and otherwise only
 * the config dumps of its own namespaces (403 for the rest).
 */
export function newDebugAccess(options: DebugAccessOptions): DebugAccess {
  const readers = new WeakMap<FastifyRequest, DebugReader>();
  const isLocal = options.isLocalCaller ?? isLoopback;
  const check = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const path = request.url.split('?')[0] ?? '';
    if (!path.startsWith('/debug/')) return undefined;
    if (isLocal(request.socket.remoteAddress)) {
      readers.set(request, ALL_DEBUG);
      return undefined;
    }
    const header = request.headers.authorization;
    const bearer = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] : undefined;
    const result = await authenticateStream(options.authenticators, bearer ? { bearerToken: bearer } : {});
    if (!('caller' in result)) {
      options.log.warn({ path, peer: request.socket.remoteAddress, reasons: result.reasons }, 'unauthenticated debug request');
      return reply.code(401).send({ error: 'authentication failure' });
    }
    const reader = debugReaderFor(result.caller.identities, options.systemNamespace);
    if (!reader || (!reader.all && !WORKLOAD_PATHS.has(path))) {
      return reply.code(403).send({ error: DEBUG_NOT_AVAILABLE });
    }
    readers.set(request, reader);
    return undefined;
  };
  return {
    install: (app) => app.addHook('onRequest', check),
    readerOf: (request) => readers.get(request) ?? { all: false, namespaces: new Set() },
  };
}
