import type { CaMaterial } from '../authority/key-cert-bundle.js';

/** The file names of CA material, in a folder and as secret keys alike. */
export const CA_FILES = {
  caCert: 'ca-cert.pem',
  caKey: 'ca-key.pem',
  certChain: 'cert-chain.pem',
  rootCert: 'root-cert.pem',
} as const;

export const SELF_SIGNED_SECRET_NAME = 'mesh-ca-secret';

export interface StoredCa {
  readonly material: CaMaterial;
  /** Opaque: what `save` needs to detect a concurrent writer. */
  readonly version: string;
}

/** Where self-signed CA material survives a restart: a folder (local mode) or the `mesh-ca-secret` secret. */
export interface CaStore {
  /** For logs: `folder /var/lib/mesh/ca`, `secret mesh-system/mesh-ca-secret`. */
  readonly description: string;
  load(): Promise<StoredCa | undefined>;
  /**
   * Writes `material`. `previous` is the version that `load` returned, or undefined to create.
   * Throws CaError `ca-store-conflict` when another writer changed or created it meanwhile.
   */
  save(material: CaMaterial, previous: string | undefined): Promise<StoredCa>;
}
