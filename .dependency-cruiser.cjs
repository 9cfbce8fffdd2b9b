/**
 * The import rules of the house (CONTRIBUTING.md): packages talk through their index, nothing
 * imports the command trees, test support never ships, and the layers point one way.
 * `npm test` runs `depcruise` with this file; a violation fails the run.
 */
const { LAYERS, PRODUCT: PRODUCT_PACKAGES } = require('./scripts/packages.cjs');

// Every product package but cli/, which nothing imports.
const PACKAGES = PRODUCT_PACKAGES.filter((name) => name !== 'cli').join('|');
// The entry points of packages and of the documented sub-packages.
const ENTRY_POINTS = [
  `^(${PACKAGES})/index\\.ts$`,
  '^xds/envoy/index\\.ts$',
  '^webhook/inject/index\\.ts$',
  '^dataplane/decisions/index\\.ts$',
  '^ca/client/index\\.ts$',
  '^crds/mesh-config/index\\.ts$',
  '^meshctl/validate/index\\.ts$',
];
const PRODUCT = `^(${PACKAGES}|cli)/`;
const TESTS = '\\.test\\.ts$';

// names, runtime → API → model → services (xDS, CA, webhook, analysis, install) → composition roots → CLI.
const layerRules = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `layer-${layer.name.replace(/ /g, '-')}-imports-no-layer-above`,
  severity: 'error',
  comment: `${layer.packages.join(', ')} (the ${layer.name} layer) import only their own layer and those below it.`,
  from: { path: `^(${layer.packages.join('|')})/`, pathNot: [TESTS, '(^|/)testing/'] },
  to: {
    path: `^(${LAYERS.slice(index + 1)
      .flatMap((above) => above.packages)
      .join('|')})/`,
  },
}));

module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make start-up order and reasoning fragile.',
      from: { path: PRODUCT, pathNot: TESTS },
      to: { circular: true },
    },
    {
      name: 'through-the-index',
      severity: 'error',
      comment: 'A package is used through its index.ts (or a documented sub-package index), never its internals.',
      from: { path: `^(${PACKAGES}|cli|apiserver-double)/`, pathNot: [TESTS, '(^|/)testing/'] },
      to: { path: `^(${PACKAGES})/`, pathNot: ['^$1/', ...ENTRY_POINTS] },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'cli/ holds the command trees; nothing depends on them (tests elsewhere may use its test support, cli/testing/).',
      from: { pathNot: ['^(cli|bin)/', TESTS] },
      to: { path: '^cli/' },
    },
    {
      name: 'tests-use-only-the-cli-test-support',
      severity: 'error',
      comment: 'A test outside cli/ runs the programs through cli/testing/ (meshctl in process), not by importing command trees.',
      from: { path: TESTS, pathNot: '^cli/' },
      to: { path: '^cli/', pathNot: '^cli/testing/' },
    },
    {
      name: 'product-never-imports-test-support',
      severity: 'error',
      comment: 'Test support lives in testing/ folders and never ships.',
      from: { path: PRODUCT, pathNot: [TESTS, '(^|/)testing/'] },
      to: { path: '(^|/)testing/' },
    },
    {
      name: 'product-never-imports-the-api-server-double',
      severity: 'error',
      comment: 'The API server double serves tests and the local mesh only.',
      from: { path: PRODUCT, pathNot: TESTS },
      to: { path: '^apiserver-double/' },
    },
    {
      name: 'names-stand-alone',
      severity: 'error',
      comment: 'names/ holds the shared names every package may import: it imports no other package of ours.',
      from: { path: '^names/', pathNot: TESTS },
      to: { path: `^(${PACKAGES}|cli|e2e|bench|testing|apiserver-double)/`, pathNot: '^names/' },
    },
    {
      name: 'runtime-stands-alone',
      severity: 'error',
      comment: 'runtime/ is the base every process plugs into: it imports no other package of ours but names/.',
      from: { path: '^runtime/', pathNot: TESTS },
      to: { path: `^(${PACKAGES}|cli|e2e|bench|testing|apiserver-double)/`, pathNot: '^(runtime|names)/' },
    },
    {
      name: 'api-server-double-on-the-base-only',
      severity: 'error',
      comment: 'The API server double speaks the Kubernetes protocol on the base layer alone (names/, runtime/, kube-patch/), so it can serve any test.',
      from: { path: '^apiserver-double/', pathNot: [TESTS, '(^|/)testing/'] },
      to: { path: `^(${PACKAGES}|cli|e2e|bench)/`, pathNot: '^(names|runtime|kube-patch)/' },
    },
    {
      name: 'kube-patch-stands-alone',
      comment: 'kube-patch/ is shared by the API server double and the injector: it imports no other package of ours but names/.',
      severity: 'error',
      from: { path: '^kube-patch/', pathNot: TESTS },
      to: { path: `^(${PACKAGES}|cli|e2e|bench|testing|apiserver-double)/`, pathNot: '^(kube-patch|names)/' },
    },
    {
      name: 'envoy-plumbing-stands-alone',
      severity: 'error',
      comment: 'xds/envoy/ is the plumbing importable without the xDS server: it imports no other part of xds/.',
      from: { path: '^xds/envoy/', pathNot: TESTS },
      to: { path: '^xds/(?!envoy/)' },
    },
    {
      name: 'push-model-below-generators-and-security',
      severity: 'error',
      comment: 'xds/model/ (the push context and what generators and security filters share) imports neither of them.',
      from: { path: '^xds/model/', pathNot: TESTS },
      to: { path: '^xds/(generators|security)/' },
    },
    {
      name: 'security-filters-below-generators',
      severity: 'error',
      comment: 'Security builders are handed to generators through xds/model/ hooks; they never import a generator.',
      from: { path: '^xds/security/', pathNot: TESTS },
      to: { path: '^xds/generators/' },
    },
    {
      name: 'ca-independent-of-xds-and-agent',
      severity: 'error',
      comment: 'The CA may use the Envoy plumbing (xds/envoy/) but not the xDS server, nor the agent.',
      from: { path: '^ca/', pathNot: TESTS },
      to: { path: '^(xds/(?!envoy/)|agent/|dataplane/)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|\\.tools)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
