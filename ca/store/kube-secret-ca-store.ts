import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import { lazyApiClient } from '../../runtime/index.js';
import { CaError } from '../ca-error.js';
import { CA_FILES, SELF_SIGNED_SECRET_NAME, type CaStore, type StoredCa } from './ca-store.js';
import type { CaMaterial } from '../authority/key-cert-bundle.js';

export interface KubeSecretCaStoreOptions {
  readonly kubeConfig: KubeConfig;
  /** The daemon's namespace (POD_NAMESPACE). */
  readonly namespace: string;
  /** Default `mesh-ca-secret`. */
  readonly name?: string;
}

const SECRET_TYPE = 'mesh.io/ca-root';

/** CA material in a Secret; writes use the resource version, so two daemons never both win. */
export function newKubeSecretCaStore(options: KubeSecretCaStoreOptions): CaStore {
  const core = lazyApiClient(options.kubeConfig, (k8s) => k8s.CoreV1Api);
  const namespace = options.namespace;
  const name = options.name ?? SELF_SIGNED_SECRET_NAME;
  const toStored = (secret: V1Secret): StoredCa | undefined => {
    const data = secret.data ?? {};
    const text = (key: string): string | undefined => (data[key] === undefined ? undefined : Buffer.from(data[key], 'base64').toString('utf8'));
    const caCertPem = text(CA_FILES.caCert);
    const caKeyPem = text(CA_FILES.caKey);
    if (caCertPem === undefined || caKeyPem === undefined) return undefined;
    return {
      material: { caCertPem, caKeyPem, certChainPem: text(CA_FILES.certChain) ?? '', rootCertPem: text(CA_FILES.rootCert) ?? caCertPem },
      version: secret.metadata?.resourceVersion ?? '',
    };
  };
  return {
    description: `secret ${namespace}/${name}`,
    load: async () => {
      const api = await core();
      const { ApiException } = await import('@kubernetes/client-node');
      try {
        return toStored(await api.readNamespacedSecret({ name, namespace }));
      } catch (err) {
        if (err instanceof ApiException && err.code === 404) return undefined;
        throw err;
      }
    },
    save: async (material, previous) => {
      const body: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, ...(previous === undefined ? {} : { resourceVersion: previous }) },
        type: SECRET_TYPE,
        data: encode(material),
      };
      const api = await core();
      const { ApiException } = await import('@kubernetes/client-node');
      try {
        const written =
          previous === undefined ? await api.createNamespacedSecret({ namespace, body }) : await api.replaceNamespacedSecret({ name, namespace, body });
        return { material, version: written.metadata?.resourceVersion ?? '' };
      } catch (err) {
        if (err instanceof ApiException && (err.code === 409 || (previous !== undefined && err.code === 404))) {
          throw new CaError('ca-store-conflict', `secret ${namespace}/${name} changed meanwhile`, { cause: err });
        }
        throw err;
      }
    },
  };
}

function encode(material: CaMaterial): Record<string, string> {
  const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
  return {
    [CA_FILES.caCert]: b64(material.caCertPem),
    [CA_FILES.caKey]: b64(material.caKeyPem),
    [CA_FILES.certChain]: b64(material.certChainPem),
    [CA_FILES.rootCert]: b64(material.rootCertPem),
  };
}
