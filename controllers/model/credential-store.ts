import { formatObjectKey } from '../../names/index.js';

/**
 * A TLS credential taken from a Kubernetes Secret (or a Secret of the config folder), already
 * checked: every PEM parses and the key matches the leaf certificate. A secret holding only a CA
 * (the `<name>-cacert` form) has no certificate or key.
 */
export interface Credential {
  readonly namespace: string;
  readonly name: string;
  readonly certificateChain?: string;
  readonly privateKey?: string;
  readonly caCertificate?: string;
}

/** The read side: what the push context snapshots (the map is never mutated, a write replaces it). */
export interface CredentialStore {
  get(namespace: string, name: string): Credential | undefined;
  /** By `formatObjectKey` (`<namespace>/<name>`); a new map after every change. */
  snapshot(): ReadonlyMap<string, Credential>;
  /** Grows by one with every change. */
  version(): number;
}

/** The write side, held by the Secret reconciler only. */
export interface CredentialStoreWriter extends CredentialStore {
  /** False (and nothing written) when the stored credential has the same material. */
  apply(credential: Credential): boolean;
  delete(namespace: string, name: string): boolean;
}

export function newCredentialStore(): CredentialStoreWriter {
  let credentials: ReadonlyMap<string, Credential> = new Map();
  let version = 0;
  const same = (a: Credential, b: Credential): boolean =>
    a.certificateChain === b.certificateChain && a.privateKey === b.privateKey && a.caCertificate === b.caCertificate;
  return {
    get: (namespace, name) => credentials.get(formatObjectKey({ namespace, name })),
    snapshot: () => credentials,
    version: () => version,
    apply(credential) {
      const key = formatObjectKey(credential);
      const previous = credentials.get(key);
      if (previous && same(previous, credential)) return false;
      credentials = new Map(credentials).set(key, Object.freeze({ ...credential }));
      version++;
      return true;
    },
    delete(namespace, name) {
      const key = formatObjectKey({ namespace, name });
      if (!credentials.has(key)) return false;
      const next = new Map(credentials);
      next.delete(key);
      credentials = next;
      version++;
      return true;
    },
  };
}
