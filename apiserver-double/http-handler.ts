import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { errorMessage, type Clock, type KubeObject } from '../runtime/index.js';
import { AdmissionRejection, admittedWrite, warningHeaderValue } from './admission/index.js';
import type { AdmissionChain } from './admission/index.js';
import { forbiddenMessage } from './access-rules.js';
import type { AccessRules } from './access-rules.js';
import { aggregatedDiscovery, AGGREGATED_DISCOVERY_V2, coreVersions, group, groupList, resourceList } from './discovery.js';
import type { FaultState } from './faults.js';
import { ADMIN_USER } from './kind-defaults.js';
import type { RequestUser } from './kind-defaults.js';
import { isPlainObject, kubeTimestamp } from './object-util.js';
import type { JsonObject } from './object-util.js';
import { openApiV3Document, openApiV3Root } from './openapi.js';
import { decodeProtobufBody, PROTOBUF_CONTENT_TYPE } from './protobuf-body.js';
import { requestRecord } from './request-log.js';
import type { ApiRequestRecorder } from './request-log.js';
import { routeOf } from './request-path.js';
import type { ResourceRoute } from './request-path.js';
import { PATCH_CONTENT_TYPES, parseRevision } from './resource-service.js';
import type { ResourceService, WriteOptions } from './resource-service.js';
import { storageKey } from './resource-registry.js';
import { apiVersionOf } from './resource-type.js';
import type { ResourceType } from './resource-type.js';
import { badRequest, methodNotAllowed, notFound, reasonForCode, resourceNotServed, StatusError } from './status-error.js';
import type { PodLogDeps } from './pod-log.js';
import { isPodStream, servePodStream } from './pod-subresources.js';
import { partialMetadata, toTable } from './table.js';
import type { IncludeObject } from './table.js';
import type { TokenAuthority } from './token-authority.js';
import type { WatchHub } from './watch-hub.js';

export interface HandlerDeps {
  service: ResourceService;
  watches: WatchHub;
  tokens: TokenAuthority;
  faults: FaultState;
  clock: Clock;
  admission: AdmissionChain;
  /** Requests refused with 403, and answered as denied by access reviews. */
  access: AccessRules;
  /** `GET /version`. */
  version: Record<string, string>;
  /** host:port as clients reach the server. */
  serverAddress: () => string;
  /** Told of every resource request (tests compare what a program asked for with its RBAC). */
  onRequest?: ApiRequestRecorder;
  /** pods/log and pods/proxy. */
  pods: PodLogDeps;
}

type Representation = 'object' | 'table' | 'partial';

interface Reply {
  status: number;
  body: unknown;
  contentType?: string;
  /** Sent as `Warning: 299 - "…"` headers. */
  warnings?: string[];
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The HTTP edge: faults, routing, content negotiation, and Status bodies for every failure. */
export function newRequestHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(deps, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, errorReply(err));
      else res.destroy();
    });
  };
}

async function handle(deps: HandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { faults } = deps;
  if (faults.refusing) {
    req.socket.resetAndDestroy();
    return;
  }
  const failure = faults.takeFailure();
  if (failure !== undefined) {
    await drain(req);
    send(res, errorReply(new StatusError(failure, reasonForCode(failure), `injected failure (${failure})`)));
    return;
  }
  if (faults.delay > 0) await deps.clock.sleep(faults.delay);
  const url = new URL(req.url ?? '/', 'http://double.invalid');
  const route = routeOf(url.pathname, deps.service.registry);
  // A pod stream (a proxied body) is passed on as it comes, never read whole.
  const streaming = route.kind === 'resource' && isPodStream(route);
  const body = streaming ? Buffer.alloc(0) : await readBody(req);
  const method = req.method ?? 'GET';
  const accept = req.headers.accept ?? '';
  switch (route.kind) {
    case 'version':
      return send(res, { status: 200, body: deps.version });
    case 'health':
      return send(res, { status: 200, body: 'ok', contentType: 'text/plain' });
    case 'core-versions':
      if (accept.includes('as=APIGroupDiscoveryList')) {
        return send(res, { status: 200, body: aggregatedDiscovery(deps.service.registry, true), contentType: AGGREGATED_DISCOVERY_V2 });
      }
      return send(res, { status: 200, body: coreVersions(deps.serverAddress()) });
    case 'groups':
      if (accept.includes('as=APIGroupDiscoveryList')) {
        return send(res, { status: 200, body: aggregatedDiscovery(deps.service.registry, false), contentType: AGGREGATED_DISCOVERY_V2 });
      }
      return send(res, { status: 200, body: groupList(deps.service.registry) });
    case 'group': {
      const found = group(deps.service.registry, route.group);
      return send(res, found ? { status: 200, body: found } : errorReply(resourceNotServed()));
    }
    case 'resource-list': {
      const found = resourceList(deps.service.registry, route.group, route.version);
      return send(res, found ? { status: 200, body: found } : errorReply(resourceNotServed()));
    }
    case 'openid-configuration':
      return send(res, { status: 200, body: deps.tokens.openidConfiguration() });
    case 'jwks':
      return send(res, { status: 200, body: deps.tokens.jwks(), contentType: 'application/jwk-set+json' });
    case 'openapi': {
      const doc =
        route.path === 'v3'
          ? openApiV3Root(deps.service.registry)
          : route.path.startsWith('v3/')
            ? openApiV3Document(deps.service.registry, route.path.slice(3))
            : undefined;
      return send(res, doc ? { status: 200, body: doc } : errorReply(resourceNotServed()));
    }
    case 'not-found':
      return send(res, errorReply(resourceNotServed()));
    case 'resource':
      break;
  }
  if (deps.onRequest || deps.access.hasDenials) {
    const record = requestRecord(method, route, url.searchParams, (await requestUser(deps, req)).username);
    deps.onRequest?.(record);
    const request = {
      verb: record.verb,
      group: record.apiGroup,
      resource: record.resource,
      ...optional('namespace', record.namespace ?? null),
      ...optional('name', record.name ?? null),
    };
    if (deps.access.isDenied(request)) {
      const details = { kind: route.type.plural, ...optional('group', route.type.group), ...optional('name', record.name ?? null) };
      return send(res, errorReply(new StatusError(403, 'Forbidden', forbiddenMessage(request, record.username), details)));
    }
  }
  try {
    if (streaming) return await servePodStream(deps.pods, route, method, url, req, res);
    const reply = await handleResource(deps, route, method, url.searchParams, req, body, res);
    if (reply) send(res, reply);
  } catch (err) {
    send(res, errorReply(err));
  }
}

async function handleResource(
  deps: HandlerDeps,
  route: ResourceRoute,
  method: string,
  query: URLSearchParams,
  req: IncomingMessage,
  body: Buffer,
  res: ServerResponse,
): Promise<Reply | undefined> {
  const { service } = deps;
  const { type, version, name, subresource } = route;
  const namespace = route.namespace ?? '';
  const accept = req.headers.accept ?? '';
  const representation: Representation = accept.includes('as=Table') ? 'table' : accept.includes('as=PartialObjectMetadata') ? 'partial' : 'object';
  const requireVerb = (verb: string): void => {
    if (!type.verbs.includes(verb)) throw methodNotAllowed();
  };
  const writeOptions = (): WriteOptions => {
    const fieldManager = query.get('fieldManager');
    return {
      ...(fieldManager ? { fieldManager } : {}),
      ...(req.headers['user-agent'] ? { userAgent: req.headers['user-agent'] } : {}),
      dryRun: query.get('dryRun') === 'All',
      force: query.get('force') === 'true',
      ...(subresource ? { subresource } : {}),
    };
  };

  if (method === 'GET') {
    if (name !== undefined) {
      if (route.watchPrefix) return watch(deps, route, query, accept, res, name);
      requireVerb('get');
      if (subresource === 'token') throw methodNotAllowed();
      const object = service.get(type, version, namespace, name);
      return { status: 200, body: represent(deps, type, version, [object], representation, query, {}, true) };
    }
    const watching = route.watchPrefix || query.get('watch') === 'true' || query.get('watch') === '1';
    if (watching) return watch(deps, route, query, accept, res, undefined);
    requireVerb('list');
    const limit = query.get('limit');
    const result = service.list(type, version, route.namespace, {
      ...optional('labelSelector', query.get('labelSelector')),
      ...optional('fieldSelector', query.get('fieldSelector')),
      ...optional('resourceVersion', query.get('resourceVersion')),
      ...optional('resourceVersionMatch', query.get('resourceVersionMatch')),
      ...optional('continue', query.get('continue')),
      ...(limit ? { limit: Number(limit) } : {}),
    });
    const meta = {
      resourceVersion: result.resourceVersion,
      ...(result.continue ? { continue: result.continue } : {}),
      ...(result.remainingItemCount !== undefined ? { remainingItemCount: result.remainingItemCount } : {}),
    };
    return { status: 200, body: represent(deps, type, version, result.items, representation, query, meta, false) };
  }

  if (method === 'POST') {
    if (name !== undefined && subresource === 'token') return tokenRequest(deps, type, namespace, name, parseBody(req, body));
    if (name !== undefined) throw methodNotAllowed();
    requireVerb('create');
    if (type.namespaced && route.namespace === undefined) throw methodNotAllowed();
    const object = parseBody(req, body);
    if (type.ephemeral) return review(deps, type, version, object);
    const user = type.kind === 'CertificateSigningRequest' ? await requestUser(deps, req) : ADMIN_USER;
    const request = { type, version, namespace, name, opts: { ...writeOptions(), user }, optionsKind: 'CreateOptions' };
    const created = await admittedWrite(deps.admission, service, request, (opts) => service.create(type, version, namespace, object, opts));
    return { status: 201, body: created.object, warnings: created.warnings };
  }

  if (method === 'PUT') {
    if (name === undefined) throw methodNotAllowed();
    requireVerb('update');
    const object = parseBody(req, body);
    const request = { type, version, namespace, name, opts: writeOptions(), optionsKind: 'UpdateOptions' };
    const updated = await admittedWrite(deps.admission, service, request, (opts) => service.update(type, version, namespace, name, object, opts));
    return { status: 200, body: updated.object, warnings: updated.warnings };
  }

  if (method === 'PATCH') {
    if (name === undefined) throw methodNotAllowed();
    requireVerb('patch');
    const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const patchType = PATCH_CONTENT_TYPES[contentType];
    if (!patchType || (patchType === 'strategic' && type.custom)) {
      throw new StatusError(
        415,
        'UnsupportedMediaType',
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml${type.custom ? '' : ', application/strategic-merge-patch+json'}`,
      );
    }
    const existed = patchType === 'apply' && service.store.get(storageKey(type), type.namespaced ? namespace : '', name) !== undefined;
    const request = { type, version, namespace, name, opts: writeOptions(), optionsKind: 'PatchOptions' };
    const patched = await admittedWrite(deps.admission, service, request, (opts) =>
      service.patch(type, version, namespace, name, patchType, body.toString('utf8'), opts),
    );
    return { status: patchType === 'apply' && !existed ? 201 : 200, body: patched.object, warnings: patched.warnings };
  }

  if (method === 'DELETE') {
    const options = body.length > 0 ? parseBody(req, body) : {};
    const preconditions = isPlainObject(options['preconditions']) ? (options['preconditions'] as { uid?: string; resourceVersion?: string }) : undefined;
    const dryRun = query.get('dryRun') === 'All' || (Array.isArray(options['dryRun']) && options['dryRun'].includes('All'));
    if (name === undefined) {
      requireVerb('deletecollection');
      const selectors = service.parseSelectors(type, query.get('labelSelector') ?? undefined, query.get('fieldSelector') ?? undefined);
      service.deleteCollection(type, version, route.namespace, selectors, { dryRun });
      return { status: 200, body: successStatus() };
    }
    requireVerb('delete');
    if (subresource) throw methodNotAllowed();
    const result = service.delete(type, version, namespace, name, { dryRun, ...(preconditions ? { preconditions } : {}) });
    if (result.kind === 'pending') return { status: 202, body: result.object };
    if (type.deleteReturnsObject) return { status: 200, body: result.object };
    return {
      status: 200,
      body: successStatus({ name, ...(type.group ? { group: type.group } : {}), kind: type.plural, uid: result.object.metadata?.uid ?? '' }),
    };
  }

  throw methodNotAllowed();
}

function watch(deps: HandlerDeps, route: ResourceRoute, query: URLSearchParams, accept: string, res: ServerResponse, name: string | undefined): undefined {
  const { service } = deps;
  const { type, version } = route;
  if (!type.verbs.includes('watch')) throw methodNotAllowed();
  let fieldSelector = query.get('fieldSelector') ?? '';
  if (name !== undefined) fieldSelector = [`metadata.name=${name}`, fieldSelector].filter((s) => s).join(',');
  const selectors = service.parseSelectors(type, query.get('labelSelector') ?? undefined, fieldSelector);
  const rv = query.get('resourceVersion');
  const timeout = query.get('timeoutSeconds');
  const representation: Representation = accept.includes('as=Table') ? 'table' : accept.includes('as=PartialObjectMetadata') ? 'partial' : 'object';
  const includeObject = (query.get('includeObject') ?? 'Metadata') as IncludeObject;
  deps.watches.serve(
    {
      type,
      version,
      ...(route.namespace !== undefined ? { namespace: route.namespace } : {}),
      selectors,
      ...(rv ? { resourceVersion: parseRevision(rv) } : {}),
      allowBookmarks: query.get('allowWatchBookmarks') === 'true',
      sendInitialEvents: query.get('sendInitialEvents') === 'true',
      ...(timeout ? { timeoutSeconds: Number(timeout) } : {}),
      ...(representation === 'object'
        ? {}
        : {
            encode: (object: KubeObject) => {
              const presented = service.present(object, type, version);
              return representation === 'table' ? toTable(type, [presented], {}, includeObject, deps.clock.now()) : partialMetadata(presented);
            },
          }),
    },
    res,
  );
  return undefined;
}

function represent(
  deps: HandlerDeps,
  type: ResourceType,
  version: string,
  objects: KubeObject[],
  representation: Representation,
  query: URLSearchParams,
  meta: Record<string, unknown>,
  single: boolean,
): unknown {
  if (representation === 'table') {
    const includeObject = (query.get('includeObject') ?? 'Metadata') as IncludeObject;
    return toTable(type, objects, meta, includeObject, deps.clock.now());
  }
  if (representation === 'partial') {
    if (single) return partialMetadata(objects[0] as KubeObject);
    return { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: meta, items: objects.map(partialMetadata) };
  }
  if (single) return objects[0];
  // The real server leaves apiVersion and kind out of built-in list items, and keeps them for custom resources.
  const items = type.custom ? objects : objects.map(({ apiVersion: _a, kind: _k, ...rest }) => rest);
  return { apiVersion: apiVersionOf(type.group, version), kind: type.listKind, metadata: meta, items };
}

async function review(deps: HandlerDeps, type: ResourceType, version: string, object: JsonObject): Promise<Reply> {
  const spec = isPlainObject(object['spec']) ? object['spec'] : {};
  const base = {
    kind: type.kind,
    apiVersion: apiVersionOf(type.group, version),
    metadata: { ...(isPlainObject(object['metadata']) ? object['metadata'] : {}), creationTimestamp: null },
    spec,
  };
  if (type.kind === 'TokenReview') {
    const token = spec['token'];
    if (typeof token !== 'string' || token === '') {
      throw new StatusError(422, 'Invalid', 'TokenReview.authentication.k8s.io "" is invalid: spec.token: Required value', {
        kind: 'TokenReview',
        group: 'authentication.k8s.io',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'spec.token' }],
      });
    }
    const audiences = Array.isArray(spec['audiences']) ? spec['audiences'].map(String) : undefined;
    const status = await deps.tokens.review(token, audiences, (ns, sa) => serviceAccountUid(deps, ns, sa));
    return { status: 201, body: { ...base, status: { ...status, user: status.user ?? {} } } };
  }
  return { status: 201, body: { ...base, status: deps.access.reviewStatus(spec) } };
}

function tokenRequest(deps: HandlerDeps, type: ResourceType, namespace: string, name: string, object: JsonObject): Reply {
  if (type.kind !== 'ServiceAccount') throw methodNotAllowed();
  const account = deps.service.store.get(storageKey(type), namespace, name);
  if (!account) throw notFound('', 'serviceaccounts', name);
  const spec = isPlainObject(object['spec']) ? object['spec'] : {};
  const expirationSeconds = typeof spec['expirationSeconds'] === 'number' ? spec['expirationSeconds'] : 3600;
  if (expirationSeconds < 600) {
    throw new StatusError(
      422,
      'Invalid',
      `TokenRequest.authentication.k8s.io "${name}" is invalid: spec.expirationSeconds: Invalid value: ${expirationSeconds}: may not specify a duration less than 10 minutes`,
    );
  }
  const audiences = Array.isArray(spec['audiences']) ? spec['audiences'].map(String) : [];
  const bound = isPlainObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : undefined;
  const podName = bound?.['kind'] === 'Pod' && typeof bound['name'] === 'string' ? bound['name'] : undefined;
  const podUid = typeof bound?.['uid'] === 'string' ? bound['uid'] : undefined;
  const token = deps.tokens.issue({
    namespace,
    serviceAccount: name,
    audiences,
    expirationSeconds,
    ...(podName ? { podName } : {}),
    ...(podUid ? { podUid } : {}),
    ...(account.metadata?.uid ? { serviceAccountUid: account.metadata.uid } : {}),
  });
  return {
    status: 201,
    body: {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: kubeTimestamp(deps.clock.now()) },
      spec: { audiences: audiences.length > 0 ? audiences : deps.tokens.defaultAudiences, expirationSeconds, boundObjectRef: bound ?? null },
      status: { token, expirationTimestamp: kubeTimestamp(deps.clock.now() + expirationSeconds * 1000) },
    },
  };
}

function serviceAccountUid(deps: HandlerDeps, namespace: string, name: string): string | undefined {
  return deps.service.store.get('/serviceaccounts', namespace, name)?.metadata?.uid;
}

/** The requester: a service account when the bearer token is one the double issued, else the admin. */
async function requestUser(deps: HandlerDeps, req: IncomingMessage): Promise<RequestUser> {
  const header = req.headers.authorization ?? '';
  const token = header.startsWith('Bearer ') ? header.slice(7).trim() : '';
  if (!token) return ADMIN_USER;
  const status = await deps.tokens.review(token, undefined, (ns, sa) => serviceAccountUid(deps, ns, sa));
  return status.authenticated && status.user ? { username: status.user.username, uid: status.user.uid, groups: status.user.groups } : ADMIN_USER;
}

function successStatus(details?: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', ...(details ? { details } : {}) };
}

function optional<K extends string>(key: K, value: string | null): Partial<Record<K, string>> {
  return value === null || value === '' ? {} : ({ [key]: value } as Record<K, string>);
}

function parseBody(req: IncomingMessage, body: Buffer): JsonObject {
  const contentType = (req.headers['content-type'] ?? 'application/json').split(';')[0]?.trim() ?? '';
  if (contentType === PROTOBUF_CONTENT_TYPE) return decodeProtobufBody(body);
  if (contentType.includes('protobuf') || contentType.includes('cbor')) {
    throw new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, ${PROTOBUF_CONTENT_TYPE}`,
    );
  }
  let parsed: unknown;
  try {
    const text = body.toString('utf8');
    parsed = contentType === 'application/yaml' ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding request body: ${errorMessage(err)}`);
  }
  if (!isPlainObject(parsed)) throw badRequest('the body of the request must be an object');
  return parsed;
}

function errorReply(err: unknown): Reply {
  if (err instanceof AdmissionRejection) return { status: err.httpCode, body: err.toStatus(), warnings: err.warnings };
  if (err instanceof StatusError) return { status: err.httpCode, body: err.toStatus() };
  const failure = new StatusError(500, 'InternalError', `Internal error occurred: ${errorMessage(err)}`);
  return { status: 500, body: failure.toStatus() };
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof reply.body === 'string' && reply.contentType === 'text/plain' ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'Content-Type': reply.contentType ?? 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-cache, private',
    ...(reply.warnings?.length ? { Warning: reply.warnings.map(warningHeaderValue) } : {}),
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new StatusError(413, 'InternalError', 'the request body is too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function drain(req: IncomingMessage): Promise<void> {
  return readBody(req).then(
    () => undefined,
    () => undefined,
  );
}
