import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { DEBUG_NOT_AVAILABLE, type DebugReader } from './debug-access.js';
import type { DebugSource } from './debug-source.js';
import { debugView, isDebugPath } from './debug-views.js';
import { CLIENT_CONFIG_TYPE, DEBUG_SYNCZ_TYPE, DEBUG_TYPE } from '../envoy/type-urls.js';
import type { ResponseSender } from '../response-sender.js';
import type { SotwRequestView } from '../should-respond.js';
import type { XdsConnection } from '../xds-connection.js';

const DEBUG_AUTHENTICATION_REQUIRED =
  'authentication required: debug information is served to authenticated streams only (the TLS port, or the plain-text one with XDS_AUTH_PLAINTEXT)';

export interface DebugRequestsOptions {
  source: DebugSource;
  /** What authenticated identities may read; undefined when the stream is not authenticated. */
  debugReader: (identities: readonly string[] | undefined) => DebugReader | undefined;
  /** Per-proxy sync status as CSDS ClientConfig messages. */
  clientConfigs: () => object[];
  /** The version of the push context in effect ('' before the first). */
  version: () => string;
  sender: Pick<ResponseSender<unknown>, 'send' | 'controlPlane'>;
}

/** The debug types over xDS: syncz (CSDS client configs) and `mesh.io/debug` (the debug views). */
export interface DebugRequests {
  respondSyncz(con: XdsConnection, request: SotwRequestView): Promise<void>;
  /**
   * A debug view as one resource whose bytes are its JSON. The system namespace reads every view;
   * another identity only the config dump of a proxy of its own namespace.
   */
  respondDebug(con: XdsConnection, request: SotwRequestView): Promise<void>;
}

export function newDebugRequests(options: DebugRequestsOptions): DebugRequests {
  const { source, sender } = options;
  return {
    async respondSyncz(con, request) {
      // The ACK (or NACK) of a debug response needs no answer.
      if (request.error_detail || (request.response_nonce ?? '') !== '') return;
      const reader = options.debugReader(con.identities);
      if (!reader) {
        con.abort(status.UNAUTHENTICATED, DEBUG_AUTHENTICATION_REQUIRED);
        return;
      }
      if (!reader.all) {
        con.abort(status.PERMISSION_DENIED, 'debug information is only available to the system namespace');
        return;
      }
      const resources = options.clientConfigs().map((config) => source.protos.encodeAny(CLIENT_CONFIG_TYPE, config));
      const version = options.version();
      await sender.send(con, DEBUG_SYNCZ_TYPE, {
        version_info: version,
        resources,
        type_url: DEBUG_SYNCZ_TYPE,
        nonce: `${version}/${randomUUID()}`,
        ...(sender.controlPlane ? { control_plane: sender.controlPlane } : {}),
      });
    },

    async respondDebug(con, request) {
      if (request.error_detail || (request.response_nonce ?? '') !== '') return;
      const name = request.resource_names?.[0] ?? '';
      const question = name.indexOf('?');
      const path = question < 0 ? name : name.slice(0, question);
      const query = new URLSearchParams(question < 0 ? '' : name.slice(question + 1));
      if (!isDebugPath(path)) {
        con.abort(
          status.INVALID_ARGUMENT,
          `unknown debug resource "${name}": one of syncz, adsz, push_status, config_dump?proxyID=<pod>.<namespace>, config_distribution?resource=<Kind>/<namespace>/<name>`,
        );
        return;
      }
      const reader = options.debugReader(con.identities);
      if (!reader) {
        con.abort(status.UNAUTHENTICATED, DEBUG_AUTHENTICATION_REQUIRED);
        return;
      }
      const view = debugView(source, path, query, reader);
      if (view.status === 403) {
        con.abort(status.PERMISSION_DENIED, `${DEBUG_NOT_AVAILABLE}: ${(con.identities ?? []).join(', ')}`);
        return;
      }
      const version = options.version();
      await sender.send(con, DEBUG_TYPE, {
        version_info: version,
        resources: [{ type_url: DEBUG_TYPE, value: Buffer.from(JSON.stringify(view.body)) }],
        type_url: DEBUG_TYPE,
        nonce: `${version}/${randomUUID()}`,
        ...(sender.controlPlane ? { control_plane: sender.controlPlane } : {}),
      });
    },
  };
}
