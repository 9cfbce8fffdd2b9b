import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { errorMessage, MeshError } from '../../runtime/index.js';
import { discoveryMessageCodecs } from './ads-service-definition.js';
import { grpcServiceDefinition } from './grpc-service-definition.js';
import { newRouteConfigurationEncoder, type EncodeChecked } from './route-configuration-encoder.js';
import type { EncodedParts } from './encoded-parts.js';
import { newStrictVerifier } from './strict-verify.js';
import { messageNameOf, ROUTE_TYPE } from './type-urls.js';

/** The Envoy v3 entry files the daemon needs; their imports load with them. */
export const ENVOY_PROTO_FILES = [
  'envoy/service/discovery/v3/ads.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/jwt_authn/v3/config.proto',
  'envoy/extensions/filters/http/rbac/v3/rbac.proto',
  'envoy/extensions/filters/network/rbac/v3/rbac.proto',
  // CUSTOM authorization: the ext_authz filters and the service they call.
  'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/filters/network/ext_authz/v3/ext_authz.proto',
  'envoy/service/auth/v3/external_auth.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/transport_sockets/tls/v3/tls.proto',
  'envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector.proto',
  'envoy/extensions/filters/listener/original_dst/v3/original_dst.proto',
  'envoy/extensions/filters/listener/http_inspector/v3/http_inspector.proto',
  'envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/service/secret/v3/sds.proto',
  'envoy/service/status/v3/csds.proto',
  // TypedStruct: the config of filters outside Envoy's own protos (the mesh's telemetry filters).
  'xds/type/v3/typed_struct.proto',
  'envoy/admin/v3/config_dump.proto',
  'envoy/extensions/path/match/uri_template/v3/uri_template_match.proto',
] as const;

export const ADS_SERVICE = 'envoy.service.discovery.v3.AggregatedDiscoveryService';
export const CSDS_SERVICE = 'envoy.service.status.v3.ClientStatusDiscoveryService';
export const SDS_SERVICE = 'envoy.service.secret.v3.SecretDiscoveryService';
export const AUTHORIZATION_SERVICE = 'envoy.service.auth.v3.Authorization';

/** What an ext_authz client needs: the Authorization service and its messages. */
export const AUTHORIZATION_PROTO_FILES = ['envoy/service/auth/v3/external_auth.proto'] as const;

import type { EncodedAny } from './encoded-any.js';

export type { EncodedAny } from './encoded-any.js';

/** Options of `toObject` for messages shown to people: Envoy's snake_case names, enums by name, nested `Any` as `@type`. */
const JSON_OPTIONS: protobuf.IConversionOptions = { enums: String, longs: String, bytes: String, json: true };

/**
 * The Envoy protos, loaded once per process by whoever builds the daemon and passed down.
 * Messages are plain objects with Envoy's snake_case field names (`keepCase`); a nested `Any`
 * is written `{ '@type': '<type URL>', ...fields }`.
 */
export interface EnvoyProtos {
  readonly root: protobuf.Root;
  /** A message type by its full name; throws for an unknown name. */
  lookupType(fullName: string): protobuf.Type;
  /**
   * Verifies `message` against the type the URL names (an unknown field, a wrong scalar, an
   * unknown enum value or two members of one oneof are errors, nested `Any` included) and
   * encodes it. Throws a MeshError with code `invalid-xds-resource`. Keyed parts of the message
   * (see `withPartKey`) are found in, or added to, `parts`.
   */
  encodeAny(typeUrl: string, message: object, parts?: EncodedParts): EncodedAny;
  /** Decodes an `Any` back to the plain-object form `encodeAny` takes (enums by name, longs as strings). */
  decodeAny(any: { type_url: string; value: Uint8Array }): Record<string, unknown>;
  /** A gRPC service definition for grpc-js servers and clients, from the loaded protos. */
  serviceDefinition(fullName: string): ServiceDefinition;
}

export interface LoadEnvoyProtosOptions {
  /** The entry files to load instead of `ENVOY_PROTO_FILES` (a process that needs only a few types loads less). */
  files?: readonly string[];
  /** Further entry files (paths relative to the include folders). */
  extraFiles?: readonly string[];
}

/** What the agent's SDS server needs: the secret service, `Secret` and the discovery messages. */
export const SDS_PROTO_FILES = ['envoy/service/secret/v3/sds.proto', 'envoy/extensions/transport_sockets/tls/v3/secret.proto'] as const;

/** Loads the Envoy protos vendored in `xds/envoy/protos/` (about 0.2 s): call once per process. */
export function loadEnvoyProtos(options: LoadEnvoyProtosOptions = {}): EnvoyProtos {
  const includeDirs = protoIncludeDirs();
  const root = new protobuf.Root();
  root.resolvePath = (origin, target) => {
    for (const dir of includeDirs) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    // Relative to the importing file as a last resort; protobufjs reports the miss.
    return protobuf.util.path.resolve(origin, target);
  };
  defineSnakeCaseStruct(root);
  defineNameTable(root);
  try {
    root.loadSync([...(options.files ?? ENVOY_PROTO_FILES), ...(options.extraFiles ?? [])], { keepCase: true });
    root.resolveAll();
  } catch (error) {
    throw new MeshError('proto-load-failed', `cannot load the Envoy protos: ${errorMessage(error)}`, { cause: error });
  }
  const types = new Map<string, protobuf.Type>();
  const lookupType = (fullName: string): protobuf.Type => {
    let type = types.get(fullName);
    if (!type) {
      try {
        type = root.lookupType(fullName);
      } catch (error) {
        throw new MeshError('unknown-proto-type', `unknown message type ${fullName}`, { cause: error });
      }
      types.set(fullName, type);
    }
    return type;
  };
  const services = new Map<string, ServiceDefinition>();
  const verifier = newStrictVerifier(root);

  const encodeChecked: EncodeChecked = (type, message) => {
    if (verifier.verify(type, message).length > 0) return undefined;
    const instance = type.fromObject(message);
    return type.verify(instance) ? undefined : type.encode(instance).finish();
  };
  // Built on first use: a process that loaded only the SDS protos has no route types.
  let encodeRouteConfiguration: ((message: object, parts?: EncodedParts) => Uint8Array | undefined) | undefined;

  return {
    root,
    lookupType,
    encodeAny(typeUrl, message, parts) {
      if (typeUrl === ROUTE_TYPE) {
        encodeRouteConfiguration ??= newRouteConfigurationEncoder(root, encodeChecked);
        const value = encodeRouteConfiguration(message, parts);
        // Anything it does not take (an invalid message included, for the error below) goes the general way.
        if (value) return { type_url: typeUrl, value };
      }
      const type = lookupType(messageNameOf(typeUrl));
      const issues = verifier.verify(type, message);
      if (issues.length === 0) {
        const instance = type.fromObject(message);
        const problem = type.verify(instance);
        if (problem) issues.push(problem);
        else return { type_url: typeUrl, value: type.encode(instance).finish() };
      }
      const shown = issues.slice(0, 5).join('; ');
      const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
      throw new MeshError('invalid-xds-resource', `invalid ${type.fullName.slice(1)}: ${shown}${more}`);
    },
    decodeAny(any) {
      const type = lookupType(messageNameOf(any.type_url));
      return type.toObject(type.decode(any.value), JSON_OPTIONS);
    },
    serviceDefinition(fullName) {
      let definition = services.get(fullName);
      if (!definition) {
        definition = grpcServiceDefinition(root.lookupService(fullName), discoveryMessageCodecs());
        services.set(fullName, definition);
      }
      return definition;
    },
  };
}

/**
 * The mesh's own xDS type, the DNS name table (`NAME_TABLE_TYPE`), with the reference's field
 * numbers: `NameTable { map<string, NameInfo> table = 1; NameInfo name_info = 2; }`.
 */
function defineNameTable(root: protobuf.Root): void {
  root.addJSON({
    mesh: {
      nested: {
        networking: {
          nested: {
            nds: {
              nested: {
                v1: {
                  nested: {
                    NameTable: {
                      fields: {
                        table: { keyType: 'string', type: 'NameInfo', id: 1 } as protobuf.IField,
                        name_info: { type: 'NameInfo', id: 2 },
                      },
                      nested: {
                        NameInfo: {
                          fields: {
                            ips: { rule: 'repeated', type: 'string', id: 1 },
                            registry: { type: 'string', id: 2 },
                            shortname: { type: 'string', id: 3 },
                            namespace: { type: 'string', id: 4 },
                            alt_hosts: { rule: 'repeated', type: 'string', id: 5 },
                          },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  });
}

/**
 * protobufjs bundles `google/protobuf/struct.proto` with camelCase field names (`stringValue`)
 * whatever `keepCase` says; Envoy's metadata then would not read like Envoy's. This root gets
 * the same messages (same wire format) with the proto's own snake_case names instead, and the
 * bundled file is marked as loaded so that imports use them.
 */
function defineSnakeCaseStruct(root: protobuf.Root): void {
  // protobufjs' IField type lacks `keyType`, which map fields need.
  root.addJSON({
    google: {
      nested: {
        protobuf: {
          nested: {
            Struct: { fields: { fields: { keyType: 'string', type: 'Value', id: 1 } as protobuf.IField } },
            Value: {
              oneofs: { kind: { oneof: ['null_value', 'number_value', 'string_value', 'bool_value', 'struct_value', 'list_value'] } },
              fields: {
                null_value: { type: 'NullValue', id: 1 },
                number_value: { type: 'double', id: 2 },
                string_value: { type: 'string', id: 3 },
                bool_value: { type: 'bool', id: 4 },
                struct_value: { type: 'Struct', id: 5 },
                list_value: { type: 'ListValue', id: 6 },
              },
            },
            NullValue: { values: { NULL_VALUE: 0 } },
            ListValue: { fields: { values: { rule: 'repeated', type: 'Value', id: 1 } } },
          },
        },
      },
    },
  });
  root.files.push('google/protobuf/struct.proto');
}

/**
 * The include folder: `xds/envoy/protos/` (Envoy's API and what it imports, vendored; see its
 * VERSIONS) beside this module in the source tree, or, from compiled output (`dist/xds/envoy/`,
 * the agent's bundle, the image), in the nearest ancestor that has one.
 */
export function protoIncludeDirs(): string[] {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'protos')];
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    candidates.push(join(dir, 'xds', 'envoy', 'protos'));
    if (dirname(dir) === dir) break;
  }
  const found = candidates.find((path) => existsSync(join(path, 'VERSIONS')));
  if (!found) throw new MeshError('proto-missing', `the Envoy protos (xds/envoy/protos/) are not beside ${here} nor in an ancestor`);
  return [found];
}
