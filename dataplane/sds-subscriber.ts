import { Metadata, makeGenericClientConstructor, type ChannelCredentials, type Client, type ClientDuplexStream } from '@grpc/grpc-js';
import type { Logger } from '../controllers/runtime/index.js';
import type { EnvoyProtos } from '../xds/envoy/index.js';
import { SECRET_TYPE } from '../xds/envoy/index.js';

const SDS_SERVICE = 'envoy.service.secret.v3.SecretDiscoveryService';

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
  inline_bytes?: string;
  inline_string?: string;
}

function text(source: DataSource | undefined): string | undefined {
  if (!source) return undefined;
  if (source.inline_string) return source.inline_string;
  if (source.inline_bytes) return Buffer.from(source.inline_bytes, 'base64').toString();
  return undefined;
}

/** Secrets over SDS, as Envoy takes them from the agent: one stream, ACK per response, reconnect on loss. */
export function newSdsSubscriber(options: SdsSubscriberOptions): SdsSubscriber {
  const { protos, log } = options;
  const Ctor = makeGenericClientConstructor(protos.serviceDefinition(SDS_SERVICE), 'SecretDiscoveryService');
  const client = new Ctor(options.target, options.credentials) as unknown as Client & {
    StreamSecrets(metadata: Metadata): ClientDuplexStream<object, { version_info: string; nonce: string; resources: { type_url: string; value: Uint8Array }[] }>;
  };
  const certificates = new Map<string, { certificateChain: string; privateKey: string }>();
  const trustedCas = new Map<string, string>();
  let closed = false;
  let retryTimer: NodeJS.Timeout | undefined;
  let call: ReturnType<typeof client.StreamSecrets> | undefined;
  let version = '';

  const open = (): void => {
    if (closed) return;
    const stream = client.StreamSecrets(new Metadata());
    call = stream;
    const request = (nonce: string, error?: string): void => {
      stream.write({
        node: options.node,
        type_url: SECRET_TYPE,
        resource_names: options.names,
        version_info: version,
        response_nonce: nonce,
        ...(error ? { error_detail: { code: 3, message: error } } : {}),
      });
    };
    stream.on('data', (response) => {
      try {
        for (const any of response.resources) {
          const secret = protos.decodeAny(any) as { name: string; tls_certificate?: { certificate_chain?: DataSource; private_key?: DataSource }; validation_context?: { trusted_ca?: DataSource } };
          if (secret.tls_certificate) {
            const chain = text(secret.tls_certificate.certificate_chain);
            const key = text(secret.tls_certificate.private_key);
            if (!chain || !key) throw new Error(`secret ${secret.name}: tls_certificate needs certificate_chain and private_key`);
            certificates.set(secret.name, { certificateChain: chain, privateKey: key });
          }
          const ca = text(secret.validation_context?.trusted_ca);
          if (ca) trustedCas.set(secret.name, ca);
        }
        version = response.version_info;
        request(response.nonce);
        options.onChange?.({ certificates, trustedCas });
      } catch (error) {
        request(response.nonce, (error as Error).message);
      }
    });
    const retry = (reason: string): void => {
      if (call !== stream || closed) return;
      call = undefined;
      log.info({ reason }, 'SDS stream ended; reconnecting');
      retryTimer = setTimeout(open, 500);
    };
    stream.on('error', (error: Error) => retry(error.message));
    stream.on('end', () => retry('stream ended'));
    request('');
  };

  return {
    start: open,
    current: () => ({ certificates, trustedCas }),
    close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      call?.cancel();
      client.close();
    },
  };
}
