/**
 * The import rules of the house (CONTRIBUTING.md): packages talk through their index, nothing
 * imports the command trees, test support never ships, and the layers point one way.
 * `npm test` runs `depcruise` with this file; a violation fails the run.
 */
const PACKAGES = 'crds|pki|kube-patch|controllers|xds|ca|webhook|analysis|agent|dataplane|meshd|meshctl|install';
// The entry points of packages and of the documented sub-packages.
const ENTRY_POINTS = [
  `^(${PACKAGES})/index\\.ts$`,
  '^controllers/runtime/index\\.ts$',
  '^xds/envoy/index\\.ts$',
  '^webhook/inject/index\\.ts$',
  '^dataplane/decisions/index\\.ts$',
  '^ca/client/index\\.ts$',
  '^crds/mesh-config/index\\.ts$',
];
const PRODUCT = `^(${PACKAGES}|cli)/`;
const TESTS = '\\.test\\.ts$';

module.exports = {
  forbidden: [
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
      from: { path: `^(${PACKAGES}|cli)/`, pathNot: [TESTS, '(^|/)testing/'] },
      to: { path: `^(${PACKAGES})/`, pathNot: ['^$1/', ...ENTRY_POINTS] },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'cli/ holds the command trees; nothing depends on them.',
      from: { pathNot: '^(cli|bin)/' },
      to: { path: '^cli/' },
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
      name: 'runtime-stands-alone',
      severity: 'error',
      comment: 'controllers/runtime/ is the base every process plugs into: it imports no other package of ours.',
      from: { path: '^controllers/runtime/', pathNot: TESTS },
      to: { path: `^(${PACKAGES}|cli|e2e|bench)/`, pathNot: '^controllers/runtime/' },
    },
    {
      name: 'kube-patch-stands-alone',
      comment: 'kube-patch/ is shared by the API server double and the injector: it imports no other package of ours.',
      severity: 'error',
      from: { path: '^kube-patch/', pathNot: TESTS },
      to: { path: `^(${PACKAGES}|cli|e2e|bench|testing|apiserver-double)/`, pathNot: '^kube-patch/' },
    },
    {
      name: 'envoy-plumbing-stands-alone',
      severity: 'error',
      comment: 'xds/envoy/ is the plumbing importable without the xDS server: it imports no other part of xds/.',
      from: { path: '^xds/envoy/', pathNot: TESTS },
      to: { path: '^xds/(?!envoy/)' },
    },
    {
      name: 'controllers-never-import-xds',
      severity: 'error',
      comment: 'Config flows to xDS through the ConfigUpdater seam, not by import.',
      from: { path: '^controllers/', pathNot: TESTS },
      to: { path: '^xds/' },
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
