import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { experimental, Metadata } from '@grpc/grpc-js';
import { buildCsr } from '../../ca/client/index.js';
import { newMeshCertificateClient, type MeshCertificateClient } from '../../ca/client/index.js';
import type { Clock, Logger, MeshMetrics } from '../../runtime/index.js';
import { graceRatioJitter, renewalDelayMs, retryDelayMs } from './renewal-time.js';
import { staticIdentity, type AgentTrustBundle } from './trust-bundle.js';
import { MeshError, errorMessage } from '../../runtime/index.js';

/** The workload's key and certificate chain, and the roots that verify peers, in PEM. */
export interface WorkloadSecrets {
  readonly certificateChain: string;
  readonly privateKey: string;
  readonly roots: string;
  readonly notAfter: number;
  /** When the agent received it; its lifetime for renewal counts from here. Absent for mounted files. */
  readonly obtainedAt?: number;
}

export interface WorkloadCertificatesOptions {
  /** `host:port` of the CA (CA_ADDR, else the discovery address). */
  readonly caAddress: string;
  /** The roots that verify the CA's serving certificate, following changes; told the bundle of each answer. */
  readonly caTrust: AgentTrustBundle;
  /**
   * The bearer token presented to the CA, read fresh for every request (a rotating projected
   * token). With a provisioned certificate a missing token is no error: the certificate speaks.
   */
  readonly token: () => Promise<string>;
  /** PROV_CERT: a certificate the workload was provisioned with, presented to the CA over mutual TLS; read fresh for every request. */
  readonly provisionedCertificate?: () => Promise<ProvisionedCertificate>;
  readonly spiffeId: string;
  /** SECRET_TTL. */
  readonly ttlMs: number;
  /** SECRET_GRACE_PERIOD_RATIO: renew when this fraction of the lifetime is left. */
  readonly graceRatio: number;
  /** ECC_SIGNATURE_ALGORITHM `ECDSA` → P-256; RSA 2048 otherwise. */
  readonly keyType: 'ecdsa' | 'rsa';
  /** PKCS8_KEY: PKCS#8 PEM instead of SEC1/PKCS#1. */
  readonly pkcs8: boolean;
  /** OUTPUT_CERTS: write `cert-chain.pem`, `key.pem` and `root-cert.pem` here. */
  readonly outputDir?: string;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics?: MeshMetrics<'pilot-agent'>;
  /** The TLS name the CA's certificate carries; default `localhost` for loopback addresses. */
  readonly caServerName?: string;
  /** The cluster the workload runs in, sent as `ClusterID` (the CA refuses clusters it does not know). */
  readonly clusterId?: string;
}

/** A provisioned key and chain, PEM. */
export interface ProvisionedCertificate {
  readonly privateKey: string;
  readonly certificateChain: string;
}

/** PROV_CERT's files: `key.pem` and `cert-chain.pem` of the folder, read on each call (provisioned certificates rotate). */
export function provisionedCertificateFiles(dir: string): () => Promise<ProvisionedCertificate> {
  const read = async (file: string): Promise<string> => {
    try {
      return await readFile(join(dir, file), 'utf8');
    } catch (error) {
      throw new MeshError('provisioned-certificate-unreadable', `PROV_CERT ${dir}: cannot read ${file}: ${errorMessage(error)}`, { cause: error });
    }
  };
  return async () => ({ privateKey: await read('key.pem'), certificateChain: await read('cert-chain.pem') });
}

export interface WorkloadCertificates {
  /** Fetches the first certificate (retrying with backoff) and keeps it renewed. */
  start(): Promise<WorkloadSecrets>;
  current(): WorkloadSecrets | undefined;
  onChange(listener: (secrets: WorkloadSecrets) => void): void;
  stop(): void;
}

function exportKey(key: KeyObject, keyType: 'ecdsa' | 'rsa', pkcs8: boolean): string {
  const type = pkcs8 ? 'pkcs8' : keyType === 'ecdsa' ? 'sec1' : 'pkcs1';
  return key.export({ format: 'pem', type }).toString();
}

/**
 * The agent's workload identity: a key and CSR for the SPIFFE id, the chain from the CA over TLS
 * with the token, renewed at the grace ratio of its lifetime (with jitter), retried with
 * exponential backoff while the CA is unreachable (never past the current certificate's expiry);
 * the current certificate keeps serving meanwhile.
 */
export function newWorkloadCertificates(options: WorkloadCertificatesOptions): WorkloadCertificates {
  const { clock, log } = options;
  let current: WorkloadSecrets | undefined;
  let timer: { cancel(): void } | undefined;
  let stopped = false;
  let client: MeshCertificateClient | undefined;
  const listeners: ((secrets: WorkloadSecrets) => void)[] = [];

  const connect = async (): Promise<MeshCertificateClient> => {
    // A provisioned certificate may have rotated on disk: each request connects with the current one.
    if (client && !options.provisionedCertificate) return client;
    client?.close();
    const provisioned = await options.provisionedCertificate?.();
    // The trust bundle as a provider: a new connection verifies the CA with the roots of the moment.
    const channelCredentials = experimental.createCertificateProviderChannelCredentials(options.caTrust, provisioned ? staticIdentity(provisioned) : null);
    client = newMeshCertificateClient(options.caAddress, channelCredentials, { 'grpc.ssl_target_name_override': options.caServerName ?? 'localhost' });
    return client;
  };

  const bearer = async (): Promise<string | undefined> => {
    try {
      return (await options.token()).trim();
    } catch (error) {
      if (options.provisionedCertificate) return undefined;
      throw error;
    }
  };

  const fetchOnce = async (): Promise<WorkloadSecrets> => {
    const { privateKey } =
      options.keyType === 'ecdsa' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
    const csr = buildCsr({ key: privateKey, sans: { uris: [options.spiffeId] } });
    const metadata = new Metadata();
    const token = await bearer();
    if (token) metadata.set('authorization', `Bearer ${token}`);
    if (options.clusterId) metadata.set('ClusterID', options.clusterId);
    const ca = await connect();
    const started = clock.now();
    options.metrics?.counter('num_outgoing_requests').inc({ request_type: 'csr' });
    let chain: string[];
    try {
      chain = await ca.createCertificate({ csr, validity_duration: Math.round(options.ttlMs / 1000) }, metadata, { deadline: new Date(Date.now() + 10_000) });
    } catch (error) {
      options.metrics?.counter('num_failed_outgoing_requests').inc({ request_type: 'csr' });
      throw error;
    } finally {
      options.metrics?.counter('outgoing_latency').inc({ request_type: 'csr' }, clock.now() - started);
    }
    if (chain.length === 0) throw new MeshError('certificate-chain-empty', 'the CA returned no certificate');
    const leaf = new X509Certificate(chain[0] as string);
    const roots = chain.length > 1 ? (chain[chain.length - 1] as string) : options.caTrust.current();
    if (chain.length > 1) options.caTrust.learn(roots);
    return {
      certificateChain: chain.slice(0, -1).join('') || (chain[0] as string),
      privateKey: exportKey(privateKey, options.keyType, options.pkcs8),
      roots,
      notAfter: Date.parse(leaf.validTo),
      obtainedAt: clock.now(),
    };
  };

  const publish = async (secrets: WorkloadSecrets): Promise<void> => {
    current = secrets;
    if (options.outputDir) {
      await mkdir(options.outputDir, { recursive: true });
      await Promise.all([
        writeAtomically(join(options.outputDir, 'cert-chain.pem'), secrets.certificateChain),
        writeAtomically(join(options.outputDir, 'key.pem'), secrets.privateKey, 0o600),
        writeAtomically(join(options.outputDir, 'root-cert.pem'), secrets.roots),
      ]);
    }
    for (const listener of listeners) listener(secrets);
  };

  const scheduleRenewal = (secrets: WorkloadSecrets): void => {
    const now = clock.now();
    schedule(
      renewalDelayMs({
        obtainedAtMs: secrets.obtainedAt ?? now,
        notAfterMs: secrets.notAfter,
        nowMs: now,
        graceRatio: options.graceRatio,
        jitter: graceRatioJitter(),
      }),
      0,
    );
  };

  const schedule = (delayMs: number, failures: number): void => {
    timer?.cancel();
    if (stopped) return;
    timer = clock.setTimer(() => void renew(failures), delayMs);
  };

  const renew = async (failures: number): Promise<void> => {
    try {
      const secrets = await fetchOnce();
      await publish(secrets);
      log.info({ notAfter: new Date(secrets.notAfter).toISOString() }, 'workload certificate renewed');
      scheduleRenewal(secrets);
    } catch (error) {
      const delay = retryDelayMs({ failures, nowMs: clock.now(), notAfterMs: current?.notAfter });
      log.warn(
        { error: errorMessage(error), retryMs: delay, expires: current ? new Date(current.notAfter).toISOString() : undefined },
        'cannot renew the workload certificate; retrying',
      );
      client?.close();
      client = undefined;
      schedule(delay, failures + 1);
    }
  };

  return {
    async start() {
      let failures = 0;
      for (;;) {
        try {
          const secrets = await fetchOnce();
          await publish(secrets);
          scheduleRenewal(secrets);
          return secrets;
        } catch (error) {
          if (stopped) throw error;
          const delay = Math.min(200 * 2 ** failures++, 10_000);
          log.warn({ error: errorMessage(error), retryMs: delay }, 'cannot get a workload certificate yet');
          client?.close();
          client = undefined;
          await new Promise<void>((resolve) => clock.setTimer(resolve, delay));
        }
      }
    },
    current: () => current,
    onChange: (listener) => void listeners.push(listener),
    stop() {
      stopped = true;
      timer?.cancel();
      client?.close();
    },
  };
}

/** A token read from a file each time (a projected service-account token rotates on disk). */
export function tokenFile(path: string): () => Promise<string> {
  return async () => (await readFile(path, 'utf8')).trim();
}

/** Readers of OUTPUT_CERTS (the app, a test) never see a half-written file: write aside, then rename. */
async function writeAtomically(file: string, content: string, mode = 0o644): Promise<void> {
  const aside = `${file}.${process.pid}.tmp`;
  await writeFile(aside, content, { mode });
  await rename(aside, file);
}
