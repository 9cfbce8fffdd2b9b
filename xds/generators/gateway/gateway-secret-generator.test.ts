import { X509Certificate } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { loadEnvoyProtos, SECRET_TYPE, type EnvoyProtos } from '../../index.js';
import { newMeshGenerators } from '../../mesh-generators.js';
import { consistent } from '../../testing/consistent.js';
import { generateSnapshot, loadCase, type Message } from '../testing/test-cases.js';
import { newGatewayCdsGenerator, newGatewayLdsGenerator, newGatewayRdsGenerator, newSidecarEdsGenerator, type SecretRefusalEvent } from '../index.js';
import { buildPushContext } from '../../model/index.js';
import { newGatewaySecretGenerator } from './gateway-secret-generator.js';
import { generateRequest } from '../../testing/generate-request.js';

const TESTDATA = fileURLToPath(new URL('./testdata/secrets/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

/** Every SdsSecretConfig name the listeners ask over ADS. */
function adsSecretNames(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const item of value) adsSecretNames(item, out);
  else if (value !== null && typeof value === 'object') {
    const record = value as Message;
    const config = record['sds_config'] as Message | undefined;
    if (typeof record['name'] === 'string' && config && 'ads' in config) out.add(record['name']);
    for (const field of Object.values(record)) adsSecretNames(field, out);
  }
  return out;
}

/** Each TLS chain of the listeners: which SNI names pick it, and which secrets it terminates with. */
function tlsChains(listeners: readonly Message[]): object[] {
  return listeners.flatMap((listener) =>
    ((listener['filter_chains'] ?? []) as Message[]).flatMap((chain) => {
      const tls = (chain['transport_socket'] as { typed_config?: Message } | undefined)?.typed_config;
      if (!tls) return [];
      const common = tls['common_tls_context'] as Message;
      const validation = (common['combined_validation_context'] as { validation_context_sds_secret_config?: { name: string } } | undefined)
        ?.validation_context_sds_secret_config?.name;
      return [
        {
          listener: listener['name'],
          serverNames: (chain['filter_chain_match'] as { server_names?: string[] } | undefined)?.server_names ?? [],
          certificates: ((common['tls_certificate_sds_secret_configs'] ?? []) as { name: string }[]).map((config) => config.name),
          ...(validation ? { validation } : {}),
          requireClientCertificate: (tls['require_client_certificate'] as { value?: boolean } | undefined)?.value === true,
        },
      ];
    }),
  );
}

/** A secret as the golden shows it: which certificate (subject, SANs) or CA, never the PEM or key. */
function describeSecret(message: Message): object {
  const certificate = message['tls_certificate'] as { certificate_chain: { inline_bytes: Buffer }; private_key: { inline_bytes: Buffer } } | undefined;
  const ca = (message['validation_context'] as { trusted_ca: { inline_bytes: Buffer } } | undefined)?.trusted_ca.inline_bytes;
  const facts = (pem: Buffer) => {
    const x509 = new X509Certificate(pem);
    return { subject: x509.subject.replace(/\n/g, ','), ...(x509.subjectAltName ? { sans: x509.subjectAltName } : {}) };
  };
  return {
    name: message['name'],
    ...(certificate
      ? { certificate: facts(certificate.certificate_chain.inline_bytes), privateKeyBytes: certificate.private_key.inline_bytes.length > 0 }
      : {}),
    ...(ca ? { trustedCa: facts(ca) } : {}),
  };
}

describe('gateway secrets (golden)', () => {
  test.each(goldenCases(TESTDATA))('%s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const push = buildPushContext(model);
    const generators = { lds: newGatewayLdsGenerator(), rds: newGatewayRdsGenerator(), cds: newGatewayCdsGenerator(), eds: newSidecarEdsGenerator() };
    const snapshot = generateSnapshot(proxy, push, generators, protos);
    expect(consistent(snapshot)).toEqual([]);
    const requested = [...adsSecretNames(snapshot.listeners)].sort();
    const refusals: SecretRefusalEvent[] = [];
    const result = newGatewaySecretGenerator({ onRefused: (event) => refusals.push(event) }).generate(
      proxy,
      push,
      generateRequest({ names: requested, full: true, configsUpdated: [] }),
    );
    const sent = (result?.resources ?? []).map((named) => {
      const message = (typeof named.resource === 'function' ? named.resource() : named.resource) as Message;
      protos.encodeAny(SECRET_TYPE, message);
      return describeSecret(message);
    });
    expectGolden(TESTDATA, name, { chains: tlsChains(snapshot.listeners), requested, sent, refused: refusals.flatMap((event) => event.refused) });
  });

  test('the mesh generators serve secrets to gateways through the same type', () => {
    const { model, proxy } = loadCase(TESTDATA, 'credentials.in.yaml');
    const sds = newMeshGenerators().find((generator) => generator.typeUrl === SECRET_TYPE);
    const result = sds?.generate(
      proxy,
      buildPushContext(model),
      generateRequest({ names: ['kubernetes://httpbin-credential'], full: true, configsUpdated: [] }),
    );
    expect(result?.resources.map((resource) => resource.name)).toEqual(['kubernetes://httpbin-credential']);
  });

  test('a push that changed no watched Secret is not answered; one that did is', () => {
    const { model, proxy } = loadCase(TESTDATA, 'credentials.in.yaml');
    const push = buildPushContext(model);
    const generator = newGatewaySecretGenerator();
    const names = ['kubernetes://bookinfo-credential-cacert'];
    const ask = (kind: 'Secret' | 'Gateway', namespace: string, secret: string) =>
      generator.generate(proxy, push, generateRequest({ names, full: true, configsUpdated: [{ kind, namespace, name: secret }] }));
    expect(ask('Gateway', 'foo', 'secure-gateway')).toBeUndefined();
    expect(ask('Secret', 'bar', 'bookinfo-credential')).toBeUndefined();
    expect(ask('Secret', 'foo', 'bookinfo-credential')?.resources.map((resource) => resource.name)).toEqual(names);
    expect(ask('Secret', 'foo', 'bookinfo-credential-cacert')?.resources.map((resource) => resource.name)).toEqual(names);
  });
});
