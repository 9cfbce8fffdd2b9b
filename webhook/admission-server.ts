import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { MeshError, errorMessage, rejectWhenAborted, untilAborted, type HttpServerRunnable, type ListenAddress, type Logger } from '../runtime/index.js';
import { serveAdmission, type AdmissionRoute } from './admission-http.js';
import type { ServingIdentity, ServingKeyCertificate } from './serving-identity.js';

export interface AdmissionServerOptions {
  /** `--httpsAddr`. */
  readonly address: ListenAddress;
  /** Resolved once the certificate authority has loaded: the daemon's serving identity. */
  readonly identity: (signal: AbortSignal) => Promise<ServingIdentity>;
  /**
   * Path → route. A path ending in `/` also serves everything under it (`/inject/` takes
   * `/inject/cluster/c1/net/n1`); the exact path without the slash is served too.
   */
  readonly routes: ReadonlyMap<string, AdmissionRoute>;
  readonly log: Logger;
}

export interface AdmissionServer extends HttpServerRunnable {
  /** Every path the server answers. */
  readonly paths: readonly string[];
}

/**
 * The HTTPS admission server (`:15017`): the injection and validation webhooks behind the
 * daemon's serving certificate. It binds once the certificate exists, and a renewed certificate
 * is served to new connections without a restart.
 */
export function newAdmissionServer(options: AdmissionServerOptions): AdmissionServer {
  const { address, routes, log } = options;
  let bound: ListenAddress | undefined;
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));

  const routeFor = (url: string | undefined): AdmissionRoute | undefined => {
    const path = (url ?? '/').split('?')[0] ?? '/';
    const exact = routes.get(path) ?? routes.get(`${path}/`);
    if (exact) return exact;
    for (const [prefix, route] of routes) if (prefix.endsWith('/') && path.startsWith(prefix)) return route;
    return undefined;
  };

  return {
    name: 'admission-webhooks',
    group: 'httpServer',
    paths: [...routes.keys()],
    boundAddress: () => {
      if (!bound) throw new MeshError('not-listening', 'the admission server is not listening yet');
      return bound;
    },
    waitForReady: (signal) => (signal ? Promise.race([ready, rejectWhenAborted(signal)]) : ready),
    async start(signal) {
      let identity: ServingIdentity;
      let first: { value: ServingKeyCertificate; stop: () => void };
      try {
        identity = await options.identity(signal);
        first = await firstIdentity(identity, signal);
      } catch (error) {
        // Stopped while the CA was still loading: nothing was bound.
        if (signal.aborted) return;
        throw error;
      }
      const serve = (req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): void => {
        const route = routeFor(req.url);
        if (!route) {
          res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
          res.end('404 page not found\n');
          return;
        }
        serveAdmission(route, req, res, log, { expectsContinue });
      };
      const server = createServer({ ...secureContextOf(first.value), minVersion: 'TLSv1.2' }, (req, res) => serve(req, res, false));
      // A client that asks before sending its body (curl does past 1 KiB) is told 100 Continue
      // only when the body will be read: one refused outright gets its answer instead.
      server.on('checkContinue', (req, res) => serve(req, res, true));
      const stopWatching = identity.watch((next) => {
        try {
          server.setSecureContext(secureContextOf(next));
        } catch (error) {
          log.error({ error: errorMessage(error) }, 'could not serve the renewed certificate; keeping the previous one');
        }
      });
      first.stop();
      server.on('tlsClientError', (error) => log.debug({ error: error.message }, 'admission TLS handshake failed'));
      try {
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(address.port, address.host, () => {
            server.off('error', reject);
            resolve();
          });
        });
        const info = server.address() as AddressInfo;
        bound = { host: info.address, port: info.port };
        log.info({ address: `${info.address}:${info.port}`, paths: [...routes.keys()] }, 'admission webhooks listening');
        markReady();
        await untilAborted(signal);
      } finally {
        stopWatching();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  };
}

function secureContextOf(identity: ServingKeyCertificate): { cert: string; key: string } {
  return { cert: identity.certChainPem, key: identity.keyPem };
}

/** Waits for the first identity the source delivers; the caller stops this watch once its own is in place. */
async function firstIdentity(identity: ServingIdentity, signal: AbortSignal): Promise<{ value: ServingKeyCertificate; stop: () => void }> {
  let stop: () => void = () => undefined;
  try {
    const value = await Promise.race([new Promise<ServingKeyCertificate>((resolve) => (stop = identity.watch(resolve))), rejectWhenAborted(signal)]);
    return { value, stop };
  } catch (error) {
    stop();
    throw error;
  }
}
