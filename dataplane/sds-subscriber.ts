import type { ChannelCredentials } from '@grpc/grpc-js';
import type { Logger } from '../runtime/index.js';
import { newDiscoveryClient, SECRET_TYPE, type DiscoveryClient, type EnvoyProtos } from '../xds/envoy/index.js';
import { MeshError, errorMessage } from '../runtime/index.js';

/** The secrets the data plane holds, in PEM. */
export interface SecretSet {
  /** `default`: the workload certificate chain and key. */
  readonly certificates: ReadonlyMap<string, { readonly certificateChain: string; readonly privateKey: string }>;
  /** `ROOTCA`: trust bundles. */
  readonly trustedCas: ReadonlyMap<string, string>;
}

export interface SdsSubscriberOptions {
  protos: EnvoyProtos;
  target: string;
  credentials: ChannelCredentials;
  node: object;
  names: readonly string[];
  log: Logger;
  onChange?: (secrets: SecretSet) => void;
}

export interface SdsSubscriber {
  start(): void;
  current(): SecretSet;
  close(): void;
}

interface DataSource {
  inline_bytes?: string | Uint8Array;
  inline_string?: string;
}

/** A decoded Secret message, as SDS sends it. */
export interface SecretMessage {
  name: string;
  tls_certificate?: { certificate_chain?: DataSource; private_key?: DataSource };
  validation_context?: { trusted_ca?: DataSource };
}

function text(source: DataSource | undefined): string | undefined {
  if (!source) return undefined;
  if (source.inline_string) return source.inline_string;
  if (typeof source.inline_bytes === 'string' && source.inline_bytes !== '') return Buffer.from(source.inline_bytes, 'base64').toString();
  if (source.inline_bytes instanceof Uint8Array && source.inline_bytes.length > 0) return Buffer.from(source.inline_bytes).toString();
  return undefined;
}

/** The PEM material of one Secret message; throws (naming the secret and field) when a certificate lacks its key or chain. */
export function readSecretMessage(secret: SecretMessage): { certificate?: { certificateChain: string; privateKey: string }; trustedCa?: string } {
  const out: { certificate?: { certificateChain: string; privateKey: string }; trustedCa?: string } = {};
  if (secret.tls_certificate) {
    const chain = text(secret.tls_certificate.certificate_chain);
    const key = text(secret.tls_certificate.private_key);
    if (!chain || !key) throw new MeshError('secret-invalid', `secret ${secret.name}: tls_certificate needs certificate_chain and private_key`);
    out.certificate = { certificateChain: chain, privateKey: key };
  }
  const ca = text(secret.validation_context?.trusted_ca);
  if (ca) out.trustedCa = ca;
  return out;
}

/** Secrets over SDS, as Envoy takes them from the agent: one stream, ACK per response, reconnect on loss. */
export function newSdsSubscriber(options: SdsSubscriberOptions): SdsSubscriber {
  const { protos, log } = options;
  const certificates = new Map<string, { certificateChain: string; privateKey: string }>();
  const trustedCas = new Map<string, string>();
  const client: DiscoveryClient = newDiscoveryClient({
    protos,
    service: 'sds',
    target: options.target,
    credentials: options.credentials,
    node: options.node,
    initial: [[SECRET_TYPE, options.names]],
    reconnect: { firstMs: 500, maxMs: 500, jitter: false },
    onResponse(response) {
      try {
        for (const any of response.resources) {
          const secret = protos.decodeAny(any) as unknown as SecretMessage;
          const material = readSecretMessage(secret);
          if (material.certificate) certificates.set(secret.name, material.certificate);
          if (material.trustedCa) trustedCas.set(secret.name, material.trustedCa);
        }
        client.ack(response);
        options.onChange?.({ certificates, trustedCas });
      } catch (error) {
        client.nack(response, errorMessage(error));
      }
    },
    onStreamEnd: ({ reason }) => log.info({ reason }, 'SDS stream ended; reconnecting'),
  });

  return {
    start: () => client.start(),
    current: () => ({ certificates, trustedCas }),
    close: () => client.close(),
  };
}
