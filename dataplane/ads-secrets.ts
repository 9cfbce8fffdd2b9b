import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readSecretMessage, type SecretMessage, type SecretSet } from './sds-subscriber.js';
import { MeshError, errorMessage } from '../runtime/index.js';

/**
 * Secrets the daemon sends over the ADS stream itself (`sds_config: { ads: {} }`, the gateways'
 * `kubernetes://…` credentials), kept apart from the agent's SDS and merged with it for the
 * listeners.
 */
export interface AdsSecrets {
  /** The names the accepted listeners and clusters ask over ADS, sorted. */
  namesFor(resources: readonly unknown[]): string[];
  /**
   * Takes one response: every secret is checked (PEMs parse, the key is the leaf's) before any is
   * kept, so a bad one rejects the whole response and the last good ones keep serving. Names no
   * longer in `subscribed` are dropped, and those `removed` (a delta response's removals).
   */
  apply(secrets: readonly Record<string, unknown>[], subscribed: readonly string[], removed?: readonly string[]): { ok: true } | { ok: false; error: string };
  /** The agent's secrets with these added. */
  merged(agent: SecretSet | undefined): SecretSet;
}

function isAdsConfig(value: Record<string, unknown>): boolean {
  const config = value['sds_config'];
  return typeof value['name'] === 'string' && config !== null && typeof config === 'object' && 'ads' in (config as object);
}

function checkCertificate(name: string, certificate: { certificateChain: string; privateKey: string }): void {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(certificate.certificateChain);
  } catch {
    throw new MeshError('secret-invalid', `secret ${name}: tls_certificate.certificate_chain is not a PEM certificate`);
  }
  let key;
  try {
    key = createPrivateKey(certificate.privateKey);
  } catch {
    throw new MeshError('secret-invalid', `secret ${name}: tls_certificate.private_key is not a PEM private key`);
  }
  if (!leaf.checkPrivateKey(key)) throw new MeshError('secret-invalid', `secret ${name}: tls_certificate.private_key does not match the certificate`);
}

const EMPTY: SecretSet = { certificates: new Map(), trustedCas: new Map() };

export function newAdsSecrets(): AdsSecrets {
  const certificates = new Map<string, { certificateChain: string; privateKey: string }>();
  const trustedCas = new Map<string, string>();
  return {
    namesFor(resources) {
      const names = new Set<string>();
      const visit = (value: unknown): void => {
        if (Array.isArray(value)) value.forEach(visit);
        else if (value !== null && typeof value === 'object') {
          const record = value as Record<string, unknown>;
          if (isAdsConfig(record)) names.add(record['name'] as string);
          Object.values(record).forEach(visit);
        }
      };
      visit(resources);
      return [...names].sort();
    },

    apply(secrets, subscribed, removed = []) {
      const taken: { name: string; material: ReturnType<typeof readSecretMessage> }[] = [];
      try {
        for (const secret of secrets) {
          const message = secret as unknown as SecretMessage;
          const material = readSecretMessage(message);
          if (material.certificate) checkCertificate(message.name, material.certificate);
          if (material.trustedCa !== undefined) {
            try {
              new X509Certificate(material.trustedCa);
            } catch {
              throw new MeshError('secret-invalid', `secret ${message.name}: validation_context.trusted_ca is not a PEM certificate`);
            }
          }
          taken.push({ name: message.name, material });
        }
      } catch (error) {
        return { ok: false, error: errorMessage(error) };
      }
      const wanted = new Set(subscribed);
      for (const name of removed) wanted.delete(name);
      for (const map of [certificates, trustedCas]) for (const name of [...map.keys()]) if (!wanted.has(name)) map.delete(name);
      for (const { name, material } of taken) {
        if (material.certificate) certificates.set(name, material.certificate);
        if (material.trustedCa !== undefined) trustedCas.set(name, material.trustedCa);
      }
      return { ok: true };
    },

    merged(agent) {
      if (certificates.size === 0 && trustedCas.size === 0) return agent ?? EMPTY;
      // Built per call: the agent's subscriber updates its maps in place, and the sets are a few entries.
      return {
        certificates: new Map([...(agent?.certificates ?? []), ...certificates]),
        trustedCas: new Map([...(agent?.trustedCas ?? []), ...trustedCas]),
      };
    },
  };
}
