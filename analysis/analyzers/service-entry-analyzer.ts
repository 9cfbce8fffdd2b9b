import type { Analyzer } from '../analyzer.js';

/**
 * MSH0134: a ServiceEntry without `addresses` whose port's protocol is unset or `TCP`: a sidecar
 * tells such a port's hosts apart only by the destination address. Quiet when the mesh config's
 * proxies capture DNS with automatic addresses (`MESH_META_DNS_CAPTURE` and
 * `MESH_META_DNS_AUTO_ALLOCATE` both "true" in `defaultConfig.proxyMetadata`). The reference
 * reports each such port at its line; without lines the same message shows once per entry. The
 * protocol compares as written (`tcp` is not `TCP`), as the reference's.
 */
export const serviceEntryAnalyzer: Analyzer = {
  name: 'serviceentry.Analyzer',
  description: 'Checks the validity of ServiceEntry',
  inputs: ['ServiceEntry', 'MeshConfig'],
  analyze(context) {
    const metadata = context.read('MeshConfig').defaultConfig?.proxyMetadata ?? {};
    const autoAllocated = metadata['MESH_META_DNS_CAPTURE'] === 'true' && metadata['MESH_META_DNS_AUTO_ALLOCATE'] === 'true';
    if (autoAllocated) return;
    for (const entry of context.read('ServiceEntry')) {
      if ((entry.object.spec.addresses ?? []).length > 0) continue;
      for (const port of entry.object.spec.ports ?? []) {
        if (port.protocol === undefined || port.protocol === '' || port.protocol === 'TCP') {
          context.report('ServiceEntryAddressesRequired', entry, 'ServiceEntry addresses are required for this protocol.');
        }
      }
    }
  },
};
