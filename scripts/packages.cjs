/**
 * The one list of the repository's packages, shared by the import rules (.dependency-cruiser.cjs),
 * the file-size check (check-file-sizes.mjs) and `npm run check` (scripts/check.mjs, which hands
 * them to the import rules' checker). Run alone, it prints them. Product packages are grouped in
 * layers, lowest first: a package may import its own layer or those below it, never one above.
 */
const LAYERS = [
  { name: 'runtime', packages: ['names', 'runtime', 'kube-patch'] },
  { name: 'API', packages: ['crds', 'pki'] },
  { name: 'model', packages: ['controllers'] },
  { name: 'services', packages: ['xds', 'ca', 'webhook', 'analysis', 'install'] },
  { name: 'composition roots', packages: ['dataplane', 'agent', 'meshd'] },
  { name: 'CLI', packages: ['meshctl', 'cli'] },
];
const PRODUCT = LAYERS.flatMap((layer) => layer.packages);
/** Test support that ships nowhere but is still checked: the API server double, the suites, the benches. */
const SUPPORT = ['apiserver-double', 'testing', 'e2e', 'bench'];

module.exports = { LAYERS, PRODUCT, SUPPORT, ALL: [...PRODUCT, ...SUPPORT] };

if (require.main === module) process.stdout.write(module.exports.ALL.join(' '));
