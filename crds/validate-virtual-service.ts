import { RE2JS } from 're2js';
import type { z } from 'zod';
import type { stringMatchSchema } from './common-schemas.js';
import type {
  Destination,
  HttpMatchRequest,
  HttpRoute,
  HttpRouteDestination,
  RouteDestination,
  TcpRoute,
  TlsRoute,
  VirtualService,
} from './virtual-service-schema.js';
import { hostNameProblem, hostsOverlap, isDns1123Label, isDns1123Subdomain, isDnsLabel, isHostSubsetOf } from './dns-names.js';
import { parseDurationNanos } from './duration.js';
import { isIpAddress, isIpOrCidr } from './ip-address.js';
import { checkExportTo, checkSelectorLabels } from './validate-shared.js';
import type { IssueSink, Path } from './validation-issue.js';
import { errorMessage } from '../runtime/index.js';

type StringMatch = z.infer<typeof stringMatchSchema>;
type Headers = HttpRouteDestination['headers'];

const MESH_GATEWAY = 'mesh';
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~A-Za-z0-9]+$/;
const PSEUDO_HEADERS: ReadonlySet<string> = new Set([':method', ':scheme', ':authority', ':path', ':status']);
const JWT_CLAIM_HEADER = '@request.auth.claims.';
const REGEX_MAX = 1024;
const KIB = 1024;
const MIB = 1024 * KIB;
const NANOS_PER_SECOND = 1_000_000_000n;

const GRPC_STATUSES: ReadonlySet<string> = new Set([
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
]);

const RETRY_ON: ReadonlySet<string> = new Set([
  '5xx',
  'gateway-error',
  'reset',
  'reset-before-request',
  'connect-failure',
  'retriable-4xx',
  'refused-stream',
  'retriable-status-codes',
  'retriable-headers',
  'envoy-ratelimited',
  'http3-post-connect-failure',
  'cancelled',
  'deadline-exceeded',
  'internal',
  'resource-exhausted',
  'unavailable',
]);

const CORS_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', '*']);

/** Why the proxy would refuse a regular expression, or undefined. Approximates RE2: the proxy's regex engine has no lookaround and no backreferences. */
export function regexProblem(pattern: string): string | undefined {
  if (pattern.length > REGEX_MAX) return `expected a regular expression of at most ${REGEX_MAX} characters, got ${pattern.length}`;
  try {
    // RE2's own parser: what Envoy accepts, no more (no lookaround, no backreferences).
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return `expected a valid RE2 regular expression, got "${pattern}": ${errorMessage(error)}`;
  }
}

function checkStringMatch(sink: IssueSink, path: Path, match: StringMatch | undefined, allowEmptyPrefix = false): void {
  if (match === undefined) return;
  if (match.prefix === '' && !allowEmptyPrefix) sink.error([...path, 'prefix'], 'expected a non-empty prefix');
  if (match.regex !== undefined) {
    const problem = match.regex === '' ? 'expected a non-empty regular expression' : regexProblem(match.regex);
    if (problem !== undefined) sink.error([...path, 'regex'], problem);
  }
}

function checkGatewayName(sink: IssueSink, path: Path, name: string): void {
  if (name === MESH_GATEWAY) return;
  const slash = name.indexOf('/');
  if (slash < 0) {
    if (!isDns1123Subdomain(name)) sink.error(path, `expected a gateway as "name" or "namespace/name", got "${name}"`);
    else if (name.includes('.')) {
      const [gateway = '', namespace = ''] = name.split('.');
      sink.warn(path, `"${name}" is the legacy "name.namespace" form: prefer "${namespace}/${gateway}"`);
    }
    return;
  }
  const namespace = name.slice(0, slash);
  const gateway = name.slice(slash + 1);
  if (!isDns1123Label(namespace) || !isDns1123Label(gateway)) {
    sink.error(path, `expected a gateway as "namespace/name" with both parts DNS-1123 labels, got "${name}"`);
  }
}

function checkDestination(sink: IssueSink, path: Path, destination: Destination): void {
  if (destination.host === '*') {
    sink.error([...path, 'host'], 'expected a specific destination host, got "*"');
  } else {
    const problem = hostNameProblem(destination.host);
    if (problem !== undefined) sink.error([...path, 'host'], problem);
  }
  if (destination.subset !== undefined && !isDnsLabel(destination.subset)) {
    sink.error([...path, 'subset'], `expected a subset name (a DNS label), got "${destination.subset}"`);
  }
}

/** Weights are relative shares; with several destinations at least one must get traffic. */
function checkWeightedDestinations(sink: IssueSink, path: Path, destinations: readonly (HttpRouteDestination | RouteDestination)[]): void {
  destinations.forEach((entry, i) => checkDestination(sink, [...path, i, 'destination'], entry.destination));
  if (destinations.length > 1 && destinations.every((entry) => (entry.weight ?? 0) === 0)) {
    sink.error(path, 'expected a weight above 0 on at least one destination when several are listed (all weights are 0)');
  }
}

function checkHeaderOperations(sink: IssueSink, path: Path, headers: Headers): void {
  if (headers === undefined) return;
  for (const side of ['request', 'response'] as const) {
    const operations = headers[side];
    if (operations === undefined) continue;
    for (const op of ['set', 'add'] as const) {
      for (const name of Object.keys(operations[op] ?? {})) {
        const lower = name.toLowerCase();
        const isAuthority = lower === ':authority' || lower === 'host';
        const pseudo = name.startsWith(':') && !(side === 'request' && isAuthority);
        const bad = name === '' || pseudo || (side === 'response' && lower === 'host');
        if (bad) sink.error([...path, side, op, name], `cannot ${op} header "${name}": expected a regular header name`);
      }
    }
    (operations.remove ?? []).forEach((name, i) => {
      if (name === '' || name.startsWith(':') || name.toLowerCase() === 'host') {
        sink.error([...path, side, 'remove', i], `cannot remove header "${name}": expected a regular header name`);
      }
    });
  }
}

function checkHeaderMatches(sink: IssueSink, path: Path, headers: Readonly<Record<string, StringMatch>> | undefined, claimsAllowed: boolean): void {
  for (const [name, match] of Object.entries(headers ?? {})) {
    const at = [...path, name];
    if (name.startsWith(JWT_CLAIM_HEADER)) {
      if (!claimsAllowed) sink.error(at, 'routing on JWT claims works only on gateways: expected gateways without "mesh"');
    } else if (!PSEUDO_HEADERS.has(name) && !HEADER_NAME.test(name)) {
      sink.error(at, `expected a header name of token characters (letters, digits, -_.!#$%&'*+^\`|~), got "${name}"`);
    }
    // In withoutHeaders a regex of "*" means "header present", not a regular expression.
    if (match.regex !== '*') checkStringMatch(sink, at, match);
  }
}

function checkHttpMatch(sink: IssueSink, path: Path, match: HttpMatchRequest, claimsAllowed: boolean): void {
  checkStringMatch(sink, [...path, 'uri'], match.uri, true);
  checkStringMatch(sink, [...path, 'scheme'], match.scheme);
  checkStringMatch(sink, [...path, 'method'], match.method);
  checkStringMatch(sink, [...path, 'authority'], match.authority);
  checkHeaderMatches(sink, [...path, 'headers'], match.headers, claimsAllowed);
  checkHeaderMatches(sink, [...path, 'withoutHeaders'], match.withoutHeaders, claimsAllowed);
  for (const [name, param] of Object.entries(match.queryParams ?? {})) checkStringMatch(sink, [...path, 'queryParams', name], param);
  checkSelectorLabels(sink, [...path, 'sourceLabels'], match.sourceLabels ?? {});
  (match.gateways ?? []).forEach((name, i) => checkGatewayName(sink, [...path, 'gateways', i], name));
  if (match.sourceNamespace !== undefined && !isDns1123Label(match.sourceNamespace)) {
    sink.error([...path, 'sourceNamespace'], `expected a namespace name (a DNS-1123 label), got "${match.sourceNamespace}"`);
  }
}

function checkRedirect(sink: IssueSink, path: Path, route: HttpRoute): void {
  const redirect = route.redirect;
  if (redirect === undefined) return;
  if (redirect.uri !== undefined && redirect.prefixRewrite !== undefined) {
    sink.error(path, 'only one of uri or prefixRewrite may be set');
  }
  if (redirect.prefixRewrite !== undefined && (route.match ?? []).some((m) => m.uri !== undefined && m.uri.prefix === undefined)) {
    sink.error([...path, 'prefixRewrite'], 'prefixRewrite replaces the matched prefix: expected every uri match of this route to be a prefix match');
  }
  const { uri, prefixRewrite, authority, port, derivePort, scheme } = redirect;
  if ([uri, prefixRewrite, authority, port, derivePort, scheme].every((value) => value === undefined || value === '')) {
    sink.error(path, 'expected at least one of uri, prefixRewrite, authority, scheme, port or derivePort');
  }
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    sink.error([...path, 'scheme'], `expected http or https, got "${scheme}"`);
  }
}

function checkRewrite(sink: IssueSink, path: Path, route: HttpRoute): void {
  const rewrite = route.rewrite;
  if (rewrite === undefined) return;
  if (rewrite.uri !== undefined && rewrite.uriRegexRewrite !== undefined) {
    sink.error(path, 'only one of uri or uriRegexRewrite may be set');
  }
  if (rewrite.uri === undefined && rewrite.uriRegexRewrite === undefined && rewrite.authority === undefined) {
    sink.error(path, 'expected at least one of uri, uriRegexRewrite or authority');
  }
  const regex = rewrite.uriRegexRewrite;
  if (regex !== undefined) {
    if (regex.match === undefined || regex.match === '' || regex.rewrite === undefined || regex.rewrite === '') {
      sink.error([...path, 'uriRegexRewrite'], 'expected both match and rewrite');
    } else {
      const problem = regexProblem(regex.match);
      if (problem !== undefined) sink.error([...path, 'uriRegexRewrite', 'match'], problem);
    }
  }
  const authoritySet = Object.keys({ ...route.headers?.request?.set, ...route.headers?.request?.add }).some((name) =>
    [':authority', 'host'].includes(name.toLowerCase()),
  );
  if (rewrite.authority !== undefined && authoritySet) {
    sink.error([...path, 'authority'], 'the authority is also set in headers.request: expected it in one place only');
  }
}

function checkRetries(sink: IssueSink, path: Path, route: HttpRoute): void {
  const retries = route.retries;
  if (retries === undefined) return;
  const configured = retries.perTryTimeout !== undefined || retries.retryOn !== undefined || retries.retryRemoteLocalities !== undefined;
  if ((retries.attempts ?? 0) === 0 && configured) {
    sink.error(path, 'retry settings have no effect while attempts is 0 (retries disabled): expected attempts of at least 1');
  }
  if (retries.retryOn !== undefined && retries.retryOn !== '') {
    for (const policy of retries.retryOn.split(',')) {
      const status = /^[0-9]+$/.test(policy) ? Number(policy) : NaN;
      if (!RETRY_ON.has(policy) && !(status >= 100 && status <= 599)) {
        sink.error(
          [...path, 'retryOn'],
          `unknown retry condition "${policy}": expected conditions such as 5xx, gateway-error, connect-failure, retriable-4xx, reset or an HTTP status code`,
        );
      }
    }
  }
}

function checkFault(sink: IssueSink, path: Path, route: HttpRoute): void {
  const fault = route.fault;
  if (fault === undefined) return;
  if (fault.abort === undefined && fault.delay === undefined) sink.error(path, 'expected an abort, a delay or both');
  const abort = fault.abort;
  if (abort !== undefined) {
    if (abort.grpcStatus !== undefined && !GRPC_STATUSES.has(abort.grpcStatus)) {
      sink.error([...path, 'abort', 'grpcStatus'], `unknown gRPC status "${abort.grpcStatus}": expected a status name such as UNAVAILABLE or NOT_FOUND`);
    }
    if (abort.http2Error !== undefined) {
      sink.error([...path, 'abort', 'http2Error'], 'HTTP/2 error aborts are not supported: expected httpStatus or grpcStatus');
    }
    if (abort.httpStatus === undefined && abort.grpcStatus === undefined && abort.http2Error === undefined) {
      sink.warn([...path, 'abort'], 'abort has no httpStatus or grpcStatus, so it never aborts');
    }
  }
  if (fault.delay?.exponentialDelay !== undefined) {
    sink.error([...path, 'delay', 'exponentialDelay'], 'exponential delays are not supported: expected fixedDelay');
  }
}

function checkCors(sink: IssueSink, path: Path, route: HttpRoute): void {
  const cors = route.corsPolicy;
  if (cors === undefined) return;
  if (cors.allowOrigin !== undefined) sink.warn([...path, 'allowOrigin'], 'allowOrigin is deprecated: use allowOrigins');
  (cors.allowOrigins ?? []).forEach((origin, i) => {
    const at = [...path, 'allowOrigins', i];
    if ([origin.exact, origin.prefix, origin.regex].every((value) => value === undefined || value === '')) {
      sink.error(at, 'expected one of exact, prefix or regex with a non-empty value');
    } else {
      checkStringMatch(sink, at, origin);
    }
  });
  (cors.allowMethods ?? []).forEach((method, i) => {
    if (!CORS_METHODS.has(method)) {
      sink.error([...path, 'allowMethods', i], `expected an HTTP method such as GET, POST or OPTIONS, got "${method}"`);
    }
  });
  for (const field of ['allowHeaders', 'exposeHeaders'] as const) {
    (cors[field] ?? []).forEach((name, i) => {
      if (name !== '*' && !HEADER_NAME.test(name)) sink.error([...path, field, i], `expected a header name or "*", got "${name}"`);
    });
  }
  if (cors.maxAge !== undefined && (parseDurationNanos(cors.maxAge) ?? 0n) % NANOS_PER_SECOND !== 0n) {
    sink.error([...path, 'maxAge'], `expected whole seconds (such as 86400s or 24h), got "${cors.maxAge}"`);
  }
}

function checkHttpRoute(sink: IssueSink, path: Path, route: HttpRoute, inDelegate: boolean, claimsAllowed: boolean): void {
  const hasRoute = (route.route ?? []).length > 0;
  const hasRedirect = route.redirect !== undefined;
  const hasDirect = route.directResponse !== undefined;
  if (route.delegate !== undefined && !inDelegate) {
    if (hasRedirect) {
      sink.error([...path, 'redirect'], 'not allowed next to delegate: expected the delegate VirtualService to handle the request');
    }
    if (route.route !== undefined) {
      sink.error([...path, 'route'], 'not allowed next to delegate: expected the delegate VirtualService to route');
    }
  } else {
    if (route.delegate !== undefined) {
      sink.error([...path, 'delegate'], 'a delegate VirtualService cannot delegate again: expected route, redirect or directResponse');
    }
    if ([hasRoute, hasRedirect, hasDirect].filter(Boolean).length > 1) {
      sink.error(path, 'only one of route, redirect or directResponse may be set');
    } else if (!hasRoute && !hasRedirect && !hasDirect) {
      sink.error(path, 'expected one of route, redirect, directResponse or delegate');
    }
    if ((hasRedirect || hasDirect) && route.fault !== undefined) {
      sink.error([...path, 'fault'], 'not applied to a redirect or direct response: expected fault only with route');
    }
    if ((hasRedirect || hasDirect) && route.rewrite !== undefined) {
      sink.error([...path, 'rewrite'], 'not applied to a redirect or direct response: expected rewrite only with route');
    }
  }
  if (route.mirror !== undefined && route.mirrors !== undefined) sink.error(path, 'only one of mirror or mirrors may be set');
  if (route.mirrorPercent !== undefined) sink.warn([...path, 'mirrorPercent'], 'mirrorPercent is deprecated: use mirrorPercentage');

  (route.match ?? []).forEach((match, k) => checkHttpMatch(sink, [...path, 'match', k], match, claimsAllowed));
  checkWeightedDestinations(sink, [...path, 'route'], route.route ?? []);
  (route.route ?? []).forEach((entry, i) => checkHeaderOperations(sink, [...path, 'route', i, 'headers'], entry.headers));
  checkHeaderOperations(sink, [...path, 'headers'], route.headers);
  if (route.mirror !== undefined) checkDestination(sink, [...path, 'mirror'], route.mirror);
  (route.mirrors ?? []).forEach((mirror, i) => checkDestination(sink, [...path, 'mirrors', i, 'destination'], mirror.destination));
  checkRedirect(sink, [...path, 'redirect'], route);
  checkRewrite(sink, [...path, 'rewrite'], route);
  checkRetries(sink, [...path, 'retries'], route);
  checkFault(sink, [...path, 'fault'], route);
  checkCors(sink, [...path, 'corsPolicy'], route);

  const body = route.directResponse?.body;
  if (body !== undefined) {
    const at = [...path, 'directResponse', 'body'];
    const size = body.string !== undefined ? Buffer.byteLength(body.string) : Buffer.from(body.bytes ?? '', 'base64').length;
    if (size > MIB) sink.error(at, `expected a body of at most 1MiB, got ${size} bytes`);
    else if (size > 100 * KIB) sink.warn(at, `a ${size}-byte body is sent in every push; keep direct responses small`);
  }
}

function checkSubnets(sink: IssueSink, path: Path, subnets: readonly string[] | undefined): void {
  (subnets ?? []).forEach((subnet, i) => {
    if (!isIpOrCidr(subnet)) sink.error([...path, i], `expected an IP address or CIDR range such as 10.0.0.0/16, got "${subnet}"`);
  });
}

function checkL4MatchCommon(
  sink: IssueSink,
  path: Path,
  match: {
    destinationSubnets?: string[] | undefined;
    sourceLabels?: Record<string, string> | undefined;
    gateways?: string[] | undefined;
    sourceNamespace?: string | undefined;
  },
): void {
  checkSubnets(sink, [...path, 'destinationSubnets'], match.destinationSubnets);
  checkSelectorLabels(sink, [...path, 'sourceLabels'], match.sourceLabels ?? {});
  (match.gateways ?? []).forEach((name, i) => checkGatewayName(sink, [...path, 'gateways', i], name));
  if (match.sourceNamespace !== undefined && !isDns1123Label(match.sourceNamespace)) {
    sink.error([...path, 'sourceNamespace'], `expected a namespace name (a DNS-1123 label), got "${match.sourceNamespace}"`);
  }
}

function checkTlsRoute(sink: IssueSink, path: Path, route: TlsRoute, hosts: readonly string[]): void {
  if (route.match.length === 0) sink.error([...path, 'match'], 'expected at least one match with sniHosts');
  route.match.forEach((match, k) => {
    const at = [...path, 'match', k];
    if (match.sniHosts.length === 0) sink.error([...at, 'sniHosts'], 'expected at least one SNI host');
    match.sniHosts.forEach((sni, j) => {
      const sniPath = [...at, 'sniHosts', j];
      if (isIpAddress(sni)) {
        sink.warn(sniPath, `"${sni}" is an IP address; SNI carries host names and most clients never send an IP in it`);
        return;
      }
      const problem = hostNameProblem(sni);
      if (problem !== undefined) sink.error(sniPath, problem);
      else if (!hosts.some((host) => isHostSubsetOf(sni, host))) {
        sink.error(sniPath, `SNI host "${sni}" is not covered by the VirtualService hosts: expected it to match one of ${hosts.join(', ')}`);
      }
    });
    checkL4MatchCommon(sink, at, match);
  });
  if ((route.route ?? []).length === 0) sink.error([...path, 'route'], 'expected at least one route destination');
  checkWeightedDestinations(sink, [...path, 'route'], route.route ?? []);
}

function checkTcpRoute(sink: IssueSink, path: Path, route: TcpRoute): void {
  (route.match ?? []).forEach((match, k) => {
    const at = [...path, 'match', k];
    checkL4MatchCommon(sink, at, match);
    if (match.sourceSubnet !== undefined && !isIpOrCidr(match.sourceSubnet)) {
      sink.error([...at, 'sourceSubnet'], `expected an IP address or CIDR range such as 10.0.0.0/16, got "${match.sourceSubnet}"`);
    }
  });
  if ((route.route ?? []).length === 0) sink.error([...path, 'route'], 'expected at least one route destination');
  checkWeightedDestinations(sink, [...path, 'route'], route.route ?? []);
}

export function validateVirtualService(sink: IssueSink, resource: VirtualService): void {
  const { spec } = resource;
  const hosts = spec.hosts ?? [];
  const gateways = spec.gateways ?? [];
  const isDelegate = hosts.length === 0;
  // No gateways means the sidecars of the mesh; listing gateways without "mesh" leaves the sidecars out.
  const boundToMesh = gateways.length === 0 || gateways.includes(MESH_GATEWAY);
  const boundToGatewaysOnly = !boundToMesh;

  if (isDelegate) {
    if (gateways.length > 0) {
      sink.error(['spec', 'gateways'], 'a delegate VirtualService (no hosts) is bound through its root: expected no gateways');
    }
    for (const kind of ['tls', 'tcp'] as const) {
      if ((spec[kind] ?? []).length > 0) {
        sink.error(['spec', kind], `a delegate VirtualService (no hosts) routes HTTP only: expected no ${kind} routes`);
      }
    }
  }
  gateways.forEach((name, i) => checkGatewayName(sink, ['spec', 'gateways', i], name));

  let hostsValid = true;
  hosts.forEach((host, i) => {
    const problem = isIpAddress(host) ? undefined : hostNameProblem(host);
    if (problem !== undefined) {
      sink.error(['spec', 'hosts', i], problem);
      hostsValid = false;
    } else if (host === '*' && boundToMesh) {
      sink.error(
        ['spec', 'hosts', i],
        'host "*" is not allowed for a VirtualService bound to the mesh (no gateways, or gateways including "mesh"): expected a specific host or a wildcard such as *.example.com',
      );
      hostsValid = false;
    }
  });
  if (hostsValid) {
    for (let i = 0; i < hosts.length; i++) {
      for (let j = i + 1; j < hosts.length; j++) {
        const [a = '', b = ''] = [hosts[i], hosts[j]];
        if (hostsOverlap(a, b)) sink.error(['spec', 'hosts', j], `host "${b}" overlaps host "${a}" (hosts[${i}]): expected distinct hosts`);
      }
    }
  }

  if ((spec.http ?? []).length === 0 && (spec.tls ?? []).length === 0 && (spec.tcp ?? []).length === 0) {
    sink.error(['spec'], 'expected at least one of http, tls or tcp routes');
  }
  (spec.http ?? []).forEach((route, i) => checkHttpRoute(sink, ['spec', 'http', i], route, isDelegate, boundToGatewaysOnly));
  (spec.tls ?? []).forEach((route, i) => checkTlsRoute(sink, ['spec', 'tls', i], route, hosts));
  (spec.tcp ?? []).forEach((route, i) => checkTcpRoute(sink, ['spec', 'tcp', i], route));
  checkExportTo(sink, ['spec', 'exportTo'], spec.exportTo, resource.metadata.namespace);
}
