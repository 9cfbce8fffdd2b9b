import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MESH_CONFIG, effectivePathNormalization } from './mesh-config-defaults.js';
import { MeshConfigError, applyMeshConfig, loadMeshConfig, parseMeshConfigYaml } from './mesh-config.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
});

async function newFolder(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'mesh-config-'));
  roots.push(root);
  return root;
}

function errorOf(fn: () => unknown): MeshConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof MeshConfigError) return error;
    throw error;
  }
  throw new Error('expected a MeshConfigError');
}

describe('mesh config', () => {
  test('an absent file gives the defaults', async () => {
    const dir = await newFolder();
    const config = loadMeshConfig({ file: join(dir, 'mesh') });
    expect(config).toEqual(DEFAULT_MESH_CONFIG);
    expect(config).toMatchObject({
      rootNamespace: 'mesh-system',
      trustDomain: 'cluster.local',
      trustDomainAliases: [],
      enableAutoMtls: true,
      proxyListenPort: 15001,
      proxyInboundListenPort: 15006,
      outboundTrafficPolicy: { mode: 'ALLOW_ANY' },
      inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
      pathNormalization: { normalization: 'DEFAULT' },
      defaultConfig: {
        discoveryAddress: 'meshd.mesh-system.svc:15012',
        proxyAdminPort: 15000,
        statusPort: 15021,
        drainDuration: '45s',
        terminationDrainDuration: '5s',
        proxyMetadata: {},
        holdApplicationUntilProxyStarts: false,
      },
    });
    expect(effectivePathNormalization(config)).toBe('BASE');
    // The result is the caller's to keep; the defaults cannot be changed by accident.
    expect(Object.isFrozen(config)).toBe(false);
    expect(Object.isFrozen(DEFAULT_MESH_CONFIG.defaultConfig)).toBe(true);
  });

  test('file values override the defaults, and defaultConfig merges field by field', async () => {
    const dir = await newFolder();
    const file = join(dir, 'mesh');
    await writeFile(
      file,
      [
        'trustDomain: example.org',
        'outboundTrafficPolicy: {mode: REGISTRY_ONLY}',
        'pathNormalization: {normalization: MERGE_SLASHES}',
        'accessLogFile: /dev/stdout',
        'defaultVirtualServiceExportTo: ["."]',
        'defaultConfig:',
        '  concurrency: 4',
        '  proxyMetadata: {DNS_CAPTURE: "true"}',
        '  holdApplicationUntilProxyStarts: true',
        'extensionProviders:',
        '  - name: authz',
        '    envoyExtAuthzHttp: {service: authz.foo.svc.cluster.local, port: 8000}',
      ].join('\n'),
    );
    const config = loadMeshConfig({ file });
    expect(config).toMatchObject({
      trustDomain: 'example.org',
      rootNamespace: 'mesh-system',
      outboundTrafficPolicy: { mode: 'REGISTRY_ONLY' },
      inboundTrafficPolicy: { mode: 'PASSTHROUGH' },
      accessLogFile: '/dev/stdout',
      defaultVirtualServiceExportTo: ['.'],
      defaultDestinationRuleExportTo: ['*'],
      defaultConfig: {
        concurrency: 4,
        proxyMetadata: { DNS_CAPTURE: 'true' },
        holdApplicationUntilProxyStarts: true,
        drainDuration: '45s',
        proxyAdminPort: 15000,
      },
    });
    expect(effectivePathNormalization(config)).toBe('MERGE_SLASHES');
    expect(config.extensionProviders.map((p) => p.name)).toEqual(['prometheus', 'envoy', 'authz']);
    expect(config.extensionProviders[2]).toEqual({ name: 'authz', envoyExtAuthzHttp: { service: 'authz.foo.svc.cluster.local', port: 8000 } });
  });

  test('fileText (the mesh ConfigMap key) is used instead of reading the file', () => {
    const config = loadMeshConfig({ file: 'configmap mesh-system/mesh', fileText: 'rootNamespace: elsewhere\n' });
    expect(config.rootNamespace).toBe('elsewhere');
    expect(loadMeshConfig({ file: 'configmap mesh-system/mesh', fileText: '' })).toEqual(DEFAULT_MESH_CONFIG);
  });

  test('the shared config lies underneath: the standard config wins, maps and lists merge as the reference', () => {
    const sharedText = [
      'trustDomain: shared.local',
      'ingressClass: shared',
      'trustDomainAliases: [z.local, a.local]',
      'defaultConfig:',
      '  proxyMetadata: {A: shared, B: shared}',
      '  statusPort: 15030',
      'defaultProviders: {metrics: [prometheus], tracing: [zipkin]}',
      'extensionProviders:',
      '  - {name: zipkin, zipkin: {service: zipkin.mesh-system.svc, port: 9411}}',
      '  - {name: envoy, envoyFileAccessLog: {path: /dev/stderr}}',
    ].join('\n');
    const fileText = [
      'trustDomain: file.local',
      'trustDomainAliases: [b.local]',
      'defaultConfig:',
      '  proxyMetadata: {B: file}',
      'defaultProviders: {accessLogging: [envoy]}',
      'extensionProviders:',
      '  - {name: zipkin, zipkin: {service: other.svc, port: 9411}}',
    ].join('\n');
    const config = loadMeshConfig({ file: 'mesh', fileText, sharedText });
    expect(config.trustDomain).toBe('file.local');
    expect(config.ingressClass).toBe('shared');
    expect(config.trustDomainAliases).toEqual(['a.local', 'b.local', 'z.local']);
    expect(config.defaultConfig.proxyMetadata).toEqual({ A: 'shared', B: 'file' });
    expect(config.defaultConfig.statusPort).toBe(15030);
    expect(config.defaultProviders).toEqual({ metrics: ['prometheus'], tracing: ['zipkin'], accessLogging: ['envoy'] });
    expect(config.extensionProviders).toEqual([
      { name: 'prometheus', prometheus: {} },
      { name: 'envoy', envoyFileAccessLog: { path: '/dev/stderr' } },
      { name: 'zipkin', zipkin: { service: 'other.svc', port: 9411 } },
    ]);
  });

  test('applyMeshConfig never changes its inputs', () => {
    const base = loadMeshConfig({ file: 'mesh', fileText: 'defaultConfig: {proxyMetadata: {A: "1"}}' });
    const before = structuredClone(base);
    const overlay = parseMeshConfigYaml('defaultConfig: {proxyMetadata: {B: "2"}}\ntrustDomainAliases: [x]', 'overlay');
    const merged = applyMeshConfig(base, overlay);
    expect(merged.defaultConfig.proxyMetadata).toEqual({ A: '1', B: '2' });
    expect(base).toEqual(before);
  });

  test.each([
    ['a YAML syntax error', 'trustDomain: a\ndefaultConfig:\n  proxyMetadata: {A: [\n', /^invalid mesh config (\S+): line [34], column \d+: /, ''],
    ['a duplicate key', 'trustDomain: a\ntrustDomain: b\n', /line 2, column 1: .*[Mm]ap keys must be unique/, ''],
    [
      'an unknown field',
      'trustDomain: a\ndefaultConfig:\n  proxyMetdata: {A: b}\n',
      /line 3, column 3: defaultConfig\.proxyMetdata: unknown field/,
      'defaultConfig.proxyMetdata',
    ],
    ['an unknown top-level field', 'rootNamspace: x\n', /line 1, column 1: rootNamspace: unknown field/, 'rootNamspace'],
    ['a bad enum', 'outboundTrafficPolicy:\n  mode: SOMETIMES\n', /line 2, column 9: outboundTrafficPolicy\.mode: /, 'outboundTrafficPolicy.mode'],
    ['the outbound mode used inbound', 'inboundTrafficPolicy: {mode: ALLOW_ANY}\n', /inboundTrafficPolicy\.mode/, 'inboundTrafficPolicy.mode'],
    ['a bad duration', 'defaultConfig:\n  drainDuration: 45 seconds\n', /line 2, column 18: defaultConfig\.drainDuration: /, 'defaultConfig.drainDuration'],
    ['a port out of range', 'proxyListenPort: 70000\n', /line 1, column 18: proxyListenPort: /, 'proxyListenPort'],
    ['a provider without a name', 'extensionProviders:\n  - prometheus: {}\n', /extensionProviders\[0\]\.name: /, 'extensionProviders[0].name'],
    ['not a map', '- a\n- b\n', /line 1, column 1: /, ''],
    [
      'a provider of an unknown type',
      'extensionProviders:\n  - name: authz\n    envoyExtAuthzHtp: {service: a.b, port: 80}\n',
      /line 3, column \d+: extensionProviders\[0\]\.envoyExtAuthzHtp: unknown provider type: expected one of envoyExtAuthzHttp, envoyExtAuthzGrpc, /,
      'extensionProviders[0].envoyExtAuthzHtp',
    ],
    [
      'an authorizer without a service',
      'extensionProviders:\n  - name: authz\n    envoyExtAuthzGrpc: {port: 9000}\n',
      /extensionProviders\[0\]\.envoyExtAuthzGrpc\.service: required: expected the authorizer's service/,
      'extensionProviders[0].envoyExtAuthzGrpc.service',
    ],
    [
      'an authorizer port out of range',
      'extensionProviders:\n  - name: authz\n    envoyExtAuthzHttp: {service: authz.foo.svc.cluster.local, port: 70000}\n',
      /line 3, column \d+: extensionProviders\[0\]\.envoyExtAuthzHttp\.port: expected a port from 1 to 65535, got 70000/,
      'extensionProviders[0].envoyExtAuthzHttp.port',
    ],
    [
      'two providers of one name',
      'extensionProviders:\n  - {name: authz, envoyExtAuthzGrpc: {service: a.b, port: 1}}\n  - {name: authz, prometheus: {}}\n',
      /line 3, column \d+: extensionProviders\[1\]\.name: duplicate extension provider name "authz"/,
      'extensionProviders[1].name',
    ],
    [
      'a service that is neither a host nor ns/host',
      'extensionProviders:\n  - {name: authz, envoyExtAuthzGrpc: {service: "a/b/c", port: 1}}\n',
      /envoyExtAuthzGrpc\.service: expected <namespace>\/<host> or a host, got "a\/b\/c"/,
      'extensionProviders[0].envoyExtAuthzGrpc.service',
    ],
    [
      'a status Envoy does not know',
      'extensionProviders:\n  - {name: authz, envoyExtAuthzHttp: {service: a.b, port: 1, statusOnError: "299"}}\n',
      /statusOnError: expected an HTTP status code Envoy knows/,
      'extensionProviders[0].envoyExtAuthzHttp.statusOnError',
    ],
    [
      'a lone wildcard header',
      'extensionProviders:\n  - {name: authz, envoyExtAuthzHttp: {service: a.b, port: 1, headersToUpstreamOnAllow: ["*"]}}\n',
      /headersToUpstreamOnAllow\[0\]: expected a header name, a prefix/,
      'extensionProviders[0].envoyExtAuthzHttp.headersToUpstreamOnAllow[0]',
    ],
    [
      'a path prefix without a slash',
      'extensionProviders:\n  - {name: authz, envoyExtAuthzHttp: {service: a.b, port: 1, pathPrefix: check}}\n',
      /pathPrefix: expected a path starting with "\/"/,
      'extensionProviders[0].envoyExtAuthzHttp.pathPrefix',
    ],
  ])('%s is an error naming the file, the line and the field', (_name, text, message, path) => {
    const error = errorOf(() => loadMeshConfig({ file: '/etc/mesh/config/mesh', fileText: text }));
    expect(error.code).toBe('invalid-mesh-config');
    expect(error.origin).toBe('/etc/mesh/config/mesh');
    expect(error.message).toContain('invalid mesh config /etc/mesh/config/mesh: ');
    expect(error.message).toMatch(message);
    expect(error.issues[0]?.path).toBe(path);
  });

  test('a bad shared config is named as such', () => {
    const error = errorOf(() => loadMeshConfig({ file: 'mesh', fileText: '', sharedText: 'bogus: 1\n', sharedOrigin: 'configmap mesh-system/shared' }));
    expect(error.message).toBe('invalid mesh config configmap mesh-system/shared: line 1, column 1: bogus: unknown field');
  });

  test('a file that exists but cannot be read is an error, not the defaults', async () => {
    const dir = await newFolder();
    const error = errorOf(() => loadMeshConfig({ file: dir }));
    expect(error.message).toMatch(new RegExp(`^invalid mesh config ${dir}: line 1, column 1: cannot read: .*EISDIR`));
  });
});

describe('meshConfigTextOf', () => {
  test('reads the mesh key of the mesh ConfigMap', async () => {
    const { meshConfigTextOf, MESH_CONFIG_MAP_KEY } = await import('./mesh-config.js');
    const { MESH_CONFIG_MAP_NAME } = await import('../../names/index.js');
    expect([MESH_CONFIG_MAP_NAME, MESH_CONFIG_MAP_KEY]).toEqual(['mesh', 'mesh']);
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'mesh', namespace: 'mesh-system' }, data: { mesh: 'trustDomain: x\n' } };
    expect(meshConfigTextOf(configMap)).toBe('trustDomain: x\n');
    expect(meshConfigTextOf({ ...configMap, data: { other: 'y' } })).toBeUndefined();
    expect(meshConfigTextOf({ ...configMap, data: undefined })).toBeUndefined();
    expect(meshConfigTextOf(undefined)).toBeUndefined();
  });
});
