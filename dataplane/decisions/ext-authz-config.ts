import { errorMessage, MeshError } from '../../runtime/index.js';
import type { DynamicMetadata } from './facts.js';
import { timeoutMs, type DurationConfig } from './duration.js';
import { httpStatusCode } from './http-status.js';
import { compileListStringMatcher, type ListStringMatcherConfig } from './list-string-matcher.js';
import { compileMetadataMatcher, type MetadataMatcherConfig } from './metadata-matcher.js';

/** A field of an ext_authz filter the data plane cannot take: the message names the field. */
export class ExtAuthzConfigError extends MeshError<'ext-authz-config-invalid'> {
  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super('ext-authz-config-invalid', `${field}: ${message}`, options);
  }
}

/** `envoy.config.core.v3.GrpcService` (the `envoy_grpc` kind). */
export interface GrpcServiceConfig {
  envoy_grpc?: { cluster_name?: string; authority?: string };
  timeout?: DurationConfig;
}

/** `envoy.extensions.filters.http.ext_authz.v3.HttpService`. */
export interface HttpServiceConfig {
  server_uri?: { uri?: string; cluster?: string; timeout?: DurationConfig };
  path_prefix?: string;
  authorization_request?: { headers_to_add?: { key?: string; value?: string }[]; allowed_headers?: ListStringMatcherConfig };
  authorization_response?: {
    allowed_upstream_headers?: ListStringMatcherConfig;
    allowed_client_headers?: ListStringMatcherConfig;
    allowed_client_headers_on_success?: ListStringMatcherConfig;
  };
}

/** `envoy.extensions.filters.http.ext_authz.v3.ExtAuthz`, the fields the data plane implements. */
export interface ExtAuthzConfig {
  http_service?: HttpServiceConfig;
  grpc_service?: GrpcServiceConfig;
  failure_mode_allow?: boolean;
  status_on_error?: { code?: string | number };
  with_request_body?: { max_request_bytes?: number; allow_partial_message?: boolean; pack_as_bytes?: boolean };
  transport_api_version?: string | number;
  filter_enabled_metadata?: MetadataMatcherConfig;
  allowed_headers?: ListStringMatcherConfig;
}

/** `envoy.extensions.filters.network.ext_authz.v3.ExtAuthz`, likewise. */
export interface NetworkExtAuthzConfig {
  stat_prefix?: string;
  grpc_service?: GrpcServiceConfig;
  failure_mode_allow?: boolean;
  transport_api_version?: string | number;
  filter_enabled_metadata?: MetadataMatcherConfig;
}

export type NamePredicate = (name: string) => boolean;

export interface ExtAuthzGrpcService {
  readonly kind: 'grpc';
  readonly cluster: string;
  /** The `:authority` of the call (the cluster's host when unset). */
  readonly authority?: string;
  readonly timeoutMs: number;
}

export interface ExtAuthzHttpService {
  readonly kind: 'http';
  readonly cluster: string;
  /** `server_uri.uri`: informative only, as in Envoy (the cluster is what is called). */
  readonly uri: string;
  readonly timeoutMs: number;
  readonly pathPrefix: string;
  readonly headersToAdd: readonly (readonly [string, string])[];
  /** Request headers sent besides the ones always sent; none when unset. */
  readonly allowedHeaders?: NamePredicate;
  /** Server headers set on the upstream request on allow; none when unset. */
  readonly upstreamHeaders?: NamePredicate;
  /** Server headers given to the client on deny; all but Host when unset. */
  readonly clientHeaders?: NamePredicate;
  /** Server headers added to the client's response on allow; none when unset. */
  readonly clientHeadersOnSuccess?: NamePredicate;
}

export interface ExtAuthzBodySettings {
  readonly maxBytes: number;
  readonly allowPartial: boolean;
  readonly packAsBytes: boolean;
}

/** A compiled HTTP ext_authz filter. */
export interface ExtAuthzHttpSettings {
  readonly service: ExtAuthzHttpService | ExtAuthzGrpcService;
  readonly failureModeAllow: boolean;
  /** The local reply's status on error (Envoy's default 403). */
  readonly statusOnError: number;
  readonly body?: ExtAuthzBodySettings;
  /** `filter_enabled_metadata`: whether the filter runs for a request with this metadata. */
  readonly isEnabled: (metadata: DynamicMetadata) => boolean;
}

/** A compiled network ext_authz filter. */
export interface ExtAuthzNetworkSettings {
  readonly statPrefix: string;
  readonly service: ExtAuthzGrpcService;
  readonly failureModeAllow: boolean;
  readonly isEnabled: (metadata: DynamicMetadata) => boolean;
}

/** Envoy's timeout for a gRPC authorization server without `grpc_service.timeout`. */
export const DEFAULT_GRPC_TIMEOUT_MS = 200;
const DEFAULT_STATUS_ON_ERROR = 403;

// `clear_route_cache`: the data plane picks the route after every filter ran, so an authorizer's
// header edits always reach route selection, which is what the flag asks of Envoy.
const HTTP_FIELDS = new Set([
  '@type',
  'http_service',
  'grpc_service',
  'failure_mode_allow',
  'status_on_error',
  'with_request_body',
  'transport_api_version',
  'filter_enabled_metadata',
  'allowed_headers',
  'clear_route_cache',
]);
const NETWORK_FIELDS = new Set(['@type', 'stat_prefix', 'grpc_service', 'failure_mode_allow', 'transport_api_version', 'filter_enabled_metadata']);
const HTTP_SERVICE_FIELDS = new Set(['server_uri', 'path_prefix', 'authorization_request', 'authorization_response']);
const SERVER_URI_FIELDS = new Set(['uri', 'cluster', 'timeout']);
const REQUEST_FIELDS = new Set(['headers_to_add', 'allowed_headers']);
const RESPONSE_FIELDS = new Set(['allowed_upstream_headers', 'allowed_client_headers', 'allowed_client_headers_on_success']);
const HEADER_VALUE_FIELDS = new Set(['key', 'value']);
const GRPC_SERVICE_FIELDS = new Set(['envoy_grpc', 'timeout']);
const ENVOY_GRPC_FIELDS = new Set(['cluster_name', 'authority']);
const BODY_FIELDS = new Set(['max_request_bytes', 'allow_partial_message', 'pack_as_bytes']);
const STATUS_FIELDS = new Set(['code']);

function onlyFields(prefix: string, value: object | undefined, allowed: ReadonlySet<string>): void {
  const unknown = Object.keys(value ?? {}).find((key) => !allowed.has(key));
  if (unknown !== undefined) throw new ExtAuthzConfigError(`${prefix}${unknown}`, 'is not supported');
}

/** Runs a compile step of one field, naming the field in what it throws. */
function field<T>(name: string, compile: () => T): T {
  try {
    return compile();
  } catch (error) {
    if (error instanceof ExtAuthzConfigError) throw error;
    throw new ExtAuthzConfigError(name, errorMessage(error), { cause: error });
  }
}

function requiredString(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new ExtAuthzConfigError(name, 'is required');
  return value;
}

function checkTransportVersion(version: string | number | undefined): void {
  // Envoy refuses V2 and AUTO (unset) alike: the Check API spoken is v3.
  if (version !== 'V3' && version !== 2)
    throw new ExtAuthzConfigError('transport_api_version', `must be V3, got ${version === undefined ? 'AUTO (unset)' : String(version)}`);
}

function enabledBy(config: MetadataMatcherConfig | undefined): (metadata: DynamicMetadata) => boolean {
  if (config === undefined) return () => true;
  return field('filter_enabled_metadata', () => {
    if (!config.filter) throw new Error('filter is required');
    if (!Array.isArray(config.path) || config.path.length === 0) throw new Error('path needs at least one key');
    return compileMetadataMatcher(config);
  });
}

function matcher(name: string, config: ListStringMatcherConfig | undefined): NamePredicate | undefined {
  return config === undefined ? undefined : field(name, () => compileListStringMatcher(config));
}

function compileGrpcService(config: GrpcServiceConfig): ExtAuthzGrpcService {
  onlyFields('grpc_service.', config, GRPC_SERVICE_FIELDS);
  if (!config.envoy_grpc) throw new ExtAuthzConfigError('grpc_service.envoy_grpc', 'is required (google_grpc is not supported)');
  onlyFields('grpc_service.envoy_grpc.', config.envoy_grpc, ENVOY_GRPC_FIELDS);
  const cluster = requiredString('grpc_service.envoy_grpc.cluster_name', config.envoy_grpc.cluster_name);
  const timeout = config.timeout;
  const ms = timeout === undefined ? DEFAULT_GRPC_TIMEOUT_MS : field('grpc_service.timeout', () => timeoutMs(timeout));
  const authority = config.envoy_grpc.authority;
  return { kind: 'grpc', cluster, ...(authority ? { authority } : {}), timeoutMs: ms };
}

function compileHttpService(config: HttpServiceConfig, topAllowedHeaders: ListStringMatcherConfig | undefined): ExtAuthzHttpService {
  onlyFields('http_service.', config, HTTP_SERVICE_FIELDS);
  const uri = config.server_uri;
  if (!uri) throw new ExtAuthzConfigError('http_service.server_uri', 'is required');
  onlyFields('http_service.server_uri.', uri, SERVER_URI_FIELDS);
  const timeout = uri.timeout;
  if (timeout === undefined) throw new ExtAuthzConfigError('http_service.server_uri.timeout', 'is required');
  const request = config.authorization_request ?? {};
  const response = config.authorization_response ?? {};
  onlyFields('http_service.authorization_request.', request, REQUEST_FIELDS);
  onlyFields('http_service.authorization_response.', response, RESPONSE_FIELDS);
  // The reference's older releases set the (deprecated) matcher inside authorization_request; Envoy
  // takes either, not both.
  if (topAllowedHeaders && request.allowed_headers)
    throw new ExtAuthzConfigError('allowed_headers', 'is also set in http_service.authorization_request.allowed_headers');
  const allowedHeaders = topAllowedHeaders
    ? matcher('allowed_headers', topAllowedHeaders)
    : matcher('http_service.authorization_request.allowed_headers', request.allowed_headers);
  const headersToAdd = (request.headers_to_add ?? []).map((header, index): [string, string] => {
    const name = `http_service.authorization_request.headers_to_add[${index}]`;
    onlyFields(`${name}.`, header, HEADER_VALUE_FIELDS);
    return [requiredString(`${name}.key`, header.key).toLowerCase(), header.value ?? ''];
  });
  const optional = <K extends string>(key: K, predicate: NamePredicate | undefined): Partial<Record<K, NamePredicate>> =>
    predicate ? ({ [key]: predicate } as Record<K, NamePredicate>) : {};
  return {
    kind: 'http',
    cluster: requiredString('http_service.server_uri.cluster', uri.cluster),
    uri: requiredString('http_service.server_uri.uri', uri.uri),
    timeoutMs: field('http_service.server_uri.timeout', () => timeoutMs(timeout)),
    pathPrefix: config.path_prefix ?? '',
    headersToAdd,
    ...optional('allowedHeaders', allowedHeaders),
    ...optional('upstreamHeaders', matcher('http_service.authorization_response.allowed_upstream_headers', response.allowed_upstream_headers)),
    ...optional('clientHeaders', matcher('http_service.authorization_response.allowed_client_headers', response.allowed_client_headers)),
    ...optional(
      'clientHeadersOnSuccess',
      matcher('http_service.authorization_response.allowed_client_headers_on_success', response.allowed_client_headers_on_success),
    ),
  };
}

function compileBody(config: ExtAuthzConfig['with_request_body']): ExtAuthzBodySettings | undefined {
  if (config === undefined) return undefined;
  onlyFields('with_request_body.', config, BODY_FIELDS);
  const maxBytes = config.max_request_bytes;
  if (maxBytes === undefined || !Number.isInteger(maxBytes) || maxBytes <= 0)
    throw new ExtAuthzConfigError('with_request_body.max_request_bytes', 'must be a positive integer');
  return { maxBytes, allowPartial: config.allow_partial_message === true, packAsBytes: config.pack_as_bytes === true };
}

function compileStatusOnError(config: ExtAuthzConfig['status_on_error']): number {
  if (config === undefined) return DEFAULT_STATUS_ON_ERROR;
  onlyFields('status_on_error.', config, STATUS_FIELDS);
  const code = httpStatusCode(config.code);
  if (code === undefined) throw new ExtAuthzConfigError('status_on_error.code', `${String(config.code)} is not an HTTP status of envoy.type.v3.StatusCode`);
  return code;
}

/** Compiles an HTTP ext_authz filter; throws an ExtAuthzConfigError naming the first field it cannot take. */
export function compileExtAuthzHttpSettings(config: ExtAuthzConfig): ExtAuthzHttpSettings {
  onlyFields('', config, HTTP_FIELDS);
  checkTransportVersion(config.transport_api_version);
  if ((config.http_service === undefined) === (config.grpc_service === undefined))
    throw new ExtAuthzConfigError('services', 'needs exactly one of http_service and grpc_service');
  if (config.grpc_service && config.allowed_headers)
    throw new ExtAuthzConfigError('allowed_headers', 'applies to http_service only (a gRPC server gets every header)');
  const service = config.http_service
    ? compileHttpService(config.http_service, config.allowed_headers)
    : compileGrpcService(config.grpc_service as GrpcServiceConfig);
  const body = compileBody(config.with_request_body);
  return {
    service,
    failureModeAllow: config.failure_mode_allow === true,
    statusOnError: compileStatusOnError(config.status_on_error),
    ...(body ? { body } : {}),
    isEnabled: enabledBy(config.filter_enabled_metadata),
  };
}

/** Compiles a network ext_authz filter (gRPC only), likewise. */
export function compileExtAuthzNetworkSettings(config: NetworkExtAuthzConfig): ExtAuthzNetworkSettings {
  onlyFields('', config, NETWORK_FIELDS);
  checkTransportVersion(config.transport_api_version);
  if (!config.grpc_service) throw new ExtAuthzConfigError('grpc_service', 'is required');
  return {
    statPrefix: requiredString('stat_prefix', config.stat_prefix),
    service: compileGrpcService(config.grpc_service),
    failureModeAllow: config.failure_mode_allow === true,
    isEnabled: enabledBy(config.filter_enabled_metadata),
  };
}
