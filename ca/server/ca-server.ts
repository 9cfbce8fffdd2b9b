import { Server, type ServerCredentials, experimental } from '@grpc/grpc-js';
import { MeshError, newRealClock, rejectWhenAborted, shutdownGrpcServer, untilAborted, type Clock, type Runnable } from '../../runtime/index.js';
import type { CertificateAuthority } from '../authority/certificate-authority.js';
import type { CertificateServiceOptions } from './certificate-service.js';
import { daemonServerNames, newDaemonCertificate, type DaemonCertificate, type DaemonHosts } from './daemon-certificate.js';
import { CaError } from '../ca-error.js';
import { newCaGrpcService } from './grpc-service.js';
import { withCipherSuites } from './tls-cipher-suites.js';

/** The daemon's CA-issued serving certificate: the hosts it names and its lifetime (`ca-settings.ts` maps them). */
export interface DaemonServingSettings extends DaemonHosts {
  /** DEFAULT_WORKLOAD_CERT_TTL. */
  readonly certTtlMs: number;
}

export interface CaServerOptions extends CertificateServiceOptions {
  /**
   * Issues the daemon's serving certificate (and workload certificates, without `signer`).
   * Absent with external signing, where `tlsFiles` must give the serving certificate.
   */
  readonly ca?: CertificateAuthority;
  readonly serving: DaemonServingSettings;
  /** Default `0.0.0.0`. */
  readonly host?: string;
  /** Default 15012; 0 picks a free port. */
  readonly port?: number;
  readonly clock?: Clock;
  /** How long a graceful shutdown may take before calls are cut; default 5 s. */
  readonly shutdownTimeoutMs?: number;
  /**
   * `--tlsCertFile`/`--tlsKeyFile` (and `--caCertFile` for the roots that verify client
   * certificates): serve these files, re-read as they change, instead of a CA-issued certificate.
   */
  readonly tlsFiles?: TlsFiles;
  /** `--tls-cipher-suites`: the TLS 1.2 suites offered (IANA names); empty means the defaults. */
  readonly cipherSuites?: readonly string[];
}

/** `--tlsCertFile`/`--tlsKeyFile` and `--caCertFile`: the daemon's serving certificate from files. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caCertFile?: string;
  /** How often the files are read again; default one minute. */
  readonly refreshIntervalMs?: number;
}

export interface CaServer extends Runnable {
  /** The bound port, once ready. */
  port(): number;
  /** The CA-issued serving certificate; absent when the certificate comes from files. */
  readonly daemonCertificate: DaemonCertificate | undefined;
}

/**
 * The CA's part of a TLS gRPC listener: its service, the daemon's serving credentials (issued
 * by the CA and renewed, or the `--tlsCertFile` files) and the renewal lifecycle. The daemon
 * puts it on the xDS TLS listener (15012); `newCaServer` gives it a listener of its own.
 */
export interface CaEndpoint {
  readonly daemonCertificate: DaemonCertificate | undefined;
  /** Adds the certificate service to a server. */
  register(server: Server): void;
  /** Server credentials with the daemon certificate; client certificates requested, not required. */
  credentials(): ServerCredentials;
  /** What the credentials serve, for the daemon's other TLS servers (the admission webhooks). */
  servingProviders(): ServingProviders;
  /** Starts the serving certificate's renewal (and re-issue on root rotation); returns the stop. */
  start(): () => void;
}

export function newCaEndpoint(options: CaServerOptions): CaEndpoint {
  const clock = options.clock ?? newRealClock();
  const ca = options.ca;
  if (!ca && !options.tlsFiles) {
    throw new CaError('ca-material-invalid', 'without a CA of its own the daemon needs --tlsCertFile and --tlsKeyFile');
  }
  const daemonCertificate = ca
    ? newDaemonCertificate({
        ca,
        ...daemonServerNames(options.serving),
        ttlMs: options.serving.certTtlMs,
        clock,
        log: options.log,
      })
    : undefined;
  let serving: ServingProviders | undefined;
  const providers = (): ServingProviders => (serving ??= servingProvidersOf(daemonCertificate, options.tlsFiles));
  return {
    daemonCertificate,
    register: (server) => newCaGrpcService(server, options),
    credentials: () => servingCredentials(providers(), options.cipherSuites ?? []),
    servingProviders: () => providers(),
    start() {
      daemonCertificate?.start();
      // Clients verified against the old bundle only would miss a rotated root: re-issue with the new one.
      const unsubscribe = daemonCertificate && ca ? ca.onRootBundleChange(() => daemonCertificate.renew()) : () => undefined;
      return () => {
        unsubscribe();
        daemonCertificate?.stop();
      };
    },
  };
}

/** A standalone TLS gRPC server with the certificate service (the CA's endpoint on a listener of its own). */
export function newCaServer(options: CaServerOptions): CaServer {
  const host = options.host ?? '0.0.0.0';
  const endpoint = newCaEndpoint(options);
  let boundPort: number | undefined;
  let ready: (() => void) | undefined;
  const readyPromise = new Promise<void>((resolve) => (ready = resolve));

  return {
    name: 'ca-server',
    group: 'httpServer',
    daemonCertificate: endpoint.daemonCertificate,
    port: () => {
      if (boundPort === undefined) throw new MeshError('not-listening', 'the CA server is not listening yet');
      return boundPort;
    },
    waitForReady: (signal) => Promise.race([readyPromise, rejectWhenAborted(signal)]),
    start: async (signal) => {
      const server = new Server();
      endpoint.register(server);
      const credentials = endpoint.credentials();
      const address = `${host.includes(':') ? `[${host}]` : host}:${options.port ?? 15012}`;
      const stop = endpoint.start();
      try {
        boundPort = await new Promise<number>((resolve, reject) => server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve(port))));
        options.log.info({ address: `${host}:${boundPort}` }, 'CA gRPC server listening');
        ready?.();
        await untilAborted(signal);
      } finally {
        stop();
        await shutdownGrpcServer(server, options.shutdownTimeoutMs ?? 5000);
      }
    },
  };
}

/** The serving identity and the roots clients are verified with (and webhooks' `caBundle` holds). */
export interface ServingProviders {
  readonly identity: experimental.CertificateProvider;
  readonly roots: experimental.CertificateProvider | null;
}

/**
 * Server credentials serving `providers.identity`; with roots, client certificates are requested
 * (never required, never checked in the handshake: the authenticators check them against the roots
 * of the trust domain they name). `cipherSuites` as `--tls-cipher-suites`; empty means the defaults.
 */
export function servingCredentials(providers: ServingProviders, cipherSuites: readonly string[]): ServerCredentials {
  return withCipherSuites(experimental.createCertificateProviderServerCredentials(providers.identity, providers.roots, false), cipherSuites);
}

function servingProvidersOf(daemonCertificate: DaemonCertificate | undefined, files: CaServerOptions['tlsFiles']): ServingProviders {
  if (!files) {
    if (!daemonCertificate) throw new CaError('ca-material-invalid', 'no serving certificate');
    return { identity: daemonCertificate, roots: daemonCertificate };
  }
  return fileServingProviders(files, daemonCertificate ?? null);
}

/** `--tlsCertFile`/`--tlsKeyFile` (and `--caCertFile`), re-read every minute (or `refreshIntervalMs`). */
export function fileServingProviders(files: TlsFiles, fallbackRoots: experimental.CertificateProvider | null = null): ServingProviders {
  const refreshIntervalMs = files.refreshIntervalMs ?? 60_000;
  const identity = new experimental.FileWatcherCertificateProvider({ certificateFile: files.certFile, privateKeyFile: files.keyFile, refreshIntervalMs });
  const roots = files.caCertFile ? new experimental.FileWatcherCertificateProvider({ caCertificateFile: files.caCertFile, refreshIntervalMs }) : fallbackRoots;
  return { identity, roots };
}
