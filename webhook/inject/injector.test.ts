import { describe, expect, test } from '@jest/globals';
import {
  InjectionError,
  compileInjector,
  injectionPatch,
  parseInjectorConfig,
  parseSingleTemplateConfig,
  isWholeInjectorConfig,
  uninjectPod,
  BUILTIN_INJECTOR_CONFIG,
} from './index.js';
import type { Pod } from './index.js';
import { deepFreeze } from '../../kube-patch/index.js';
import { builtinConfig, builtinInjector, meshConfigWith } from './testing/injector-fixture.js';

function pod(metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', ...metadata },
    spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec },
  };
}

function thrown(run: () => unknown): InjectionError {
  try {
    run();
  } catch (error) {
    if (error instanceof InjectionError) return error;
    throw error;
  }
  throw new Error('expected an InjectionError');
}

describe('required: the reference order', () => {
  const selectors = {
    policy: 'enabled',
    neverInjectSelector: [{ matchLabels: { never: 'yes' } }],
    alwaysInjectSelector: [{ matchExpressions: [{ key: 'always', operator: 'Exists' as const }] }],
  };
  const injector = compileInjector({ ...builtinConfig(), ...selectors });
  const disabled = compileInjector({ ...builtinConfig(), ...selectors, policy: 'disabled' });

  test.each([
    ['host networking wins over an explicit yes', injector, pod({ labels: { 'sidecar.mesh.io/inject': 'true' } }, { hostNetwork: true }), 'default', false],
    ['an ignored namespace wins over an explicit yes', injector, pod({ annotations: { 'sidecar.mesh.io/inject': 'true' } }), 'kube-system', false],
    ['local-path-storage is ignored', injector, pod(), 'local-path-storage', false],
    [
      'the label wins over the annotation (label false)',
      injector,
      pod({ labels: { 'sidecar.mesh.io/inject': 'false' }, annotations: { 'sidecar.mesh.io/inject': 'true' } }),
      'default',
      false,
    ],
    [
      'the label wins over the annotation (label true)',
      disabled,
      pod({ labels: { 'sidecar.mesh.io/inject': 'true' }, annotations: { 'sidecar.mesh.io/inject': 'false' } }),
      'default',
      true,
    ],
    [
      'a label other than true/false falls through to the annotation',
      disabled,
      pod({ labels: { 'sidecar.mesh.io/inject': 'maybe' }, annotations: { 'sidecar.mesh.io/inject': 'yes' } }),
      'default',
      true,
    ],
    ['annotation y', disabled, pod({ annotations: { 'sidecar.mesh.io/inject': 'y' } }), 'default', true],
    ['annotation On (any case)', disabled, pod({ annotations: { 'sidecar.mesh.io/inject': 'On' } }), 'default', true],
    ['annotation anything else means no', injector, pod({ annotations: { 'sidecar.mesh.io/inject': 'nope' } }), 'default', false],
    [
      'an explicit yes wins over neverInjectSelector',
      injector,
      pod({ labels: { never: 'yes' }, annotations: { 'sidecar.mesh.io/inject': 'true' } }),
      'default',
      true,
    ],
    ['neverInjectSelector before alwaysInjectSelector', injector, pod({ labels: { never: 'yes', always: '' } }), 'default', false],
    ['alwaysInjectSelector over a disabled policy', disabled, pod({ labels: { always: '' } }), 'default', true],
    ['policy enabled', injector, pod(), 'default', true],
    ['policy disabled', disabled, pod(), 'default', false],
    ['an unknown policy never injects', compileInjector({ ...builtinConfig(), policy: 'sometimes' }), pod(), 'default', false],
  ])('%s', (_name, subject, input, namespace, expected) => {
    expect(subject.required(input, namespace).inject).toBe(expected);
  });
});

describe('annotation validation', () => {
  test('every refused value is reported, in one message', () => {
    const annotations = {
      'sidecar.mesh.io/interceptionMode': 'BOGUS',
      'sidecar.mesh.io/enableCoreDump': 'sure',
      'status.sidecar.mesh.io/port': '70000',
      'readiness.status.sidecar.mesh.io/periodSeconds': '-1',
      'traffic.sidecar.mesh.io/includeOutboundIPRanges': '10.0.0.0/33',
      'traffic.sidecar.mesh.io/excludeInboundPorts': '80,http',
      'prometheus.mesh.io/merge-metrics': 'perhaps',
      'proxy.mesh.io/config': 'concurrency: lots',
    };
    const error = thrown(() => builtinInjector().inject({ pod: pod({ annotations }), namespace: 'default', meshConfig: meshConfigWith() }));
    expect(error.code).toBe('invalid-injection-annotation');
    const failures = error.message.split('; ');
    expect(failures).toHaveLength(8);
    expect(failures).toContain("invalid value 'BOGUS' for annotation 'sidecar.mesh.io/interceptionMode': interceptionMode invalid, use REDIRECT,TPROXY,NONE");
    expect(failures).toContain("invalid value 'sure' for annotation 'sidecar.mesh.io/enableCoreDump': strconv.ParseBool: parsing \"sure\": invalid syntax");
    expect(failures).toContain("invalid value '70000' for annotation 'status.sidecar.mesh.io/port': port number 70000 must be in the range 1..65535");
    expect(failures).toContain(
      "invalid value '10.0.0.0/33' for annotation 'traffic.sidecar.mesh.io/includeOutboundIPRanges': failed parsing cidr '10.0.0.0/33': invalid CIDR address: 10.0.0.0/33",
    );
    expect(failures.find((failure) => failure.includes("'proxy.mesh.io/config'"))).toMatch(
      /^invalid value 'concurrency: lots' for annotation 'proxy.mesh.io\/config': concurrency: /,
    );
  });

  test('valid values pass, wildcards included', () => {
    const annotations = {
      'traffic.sidecar.mesh.io/includeOutboundIPRanges': '*',
      'traffic.sidecar.mesh.io/includeInboundPorts': '*',
      'traffic.sidecar.mesh.io/excludeOutboundIPRanges': 'fd00::/8,10.1.0.0/16',
    };
    expect(() => builtinInjector().inject({ pod: pod({ annotations }), namespace: 'default', meshConfig: meshConfigWith() })).not.toThrow();
  });
});

describe('templates', () => {
  const values = builtinConfig().values;
  const configWith = (templates: Record<string, string>) => ({ ...builtinConfig(), templates, values });

  test('a template that does not compile fails when the injector is built', () => {
    const error = thrown(() => compileInjector(configWith({ sidecar: 'spec:\n  {{#if x}}\n' })));
    expect(error.code).toBe('injection-template-failed');
    expect(error.message).toMatch(/^failed to run injection template: template "sidecar": /);
  });

  test('a helper that fails at render time fails the injection', () => {
    const injector = compileInjector(configWith({ sidecar: 'spec: {{fromJson (annotation objectMeta "x" "{not json")}}\n' }));
    const error = thrown(() => injector.inject({ pod: pod(), namespace: 'default', meshConfig: meshConfigWith() }));
    expect(error.code).toBe('injection-template-failed');
    expect(error.message).toMatch(/^failed to run injection template: .*JSON/);
  });

  test('an unknown helper fails the injection', () => {
    const injector = compileInjector(configWith({ sidecar: 'spec: {{noSuchHelper 1}}\n' }));
    expect(() => injector.inject({ pod: pod(), namespace: 'default', meshConfig: meshConfigWith() })).toThrow(
      /^failed to run injection template: Missing helper: "noSuchHelper"/,
    );
  });

  test('a template that renders no YAML object fails', () => {
    const injector = compileInjector(configWith({ sidecar: '- a list\n' }));
    expect(() => injector.inject({ pod: pod(), namespace: 'default', meshConfig: meshConfigWith() })).toThrow(
      'failed to run injection template: the template did not render a YAML object',
    );
  });

  test('aliases name several templates; env reads the given environment only', () => {
    const config = {
      ...configWith({ a: 'metadata:\n  labels:\n    a: {{toJson (env "A" "unset")}}\n', b: 'metadata:\n  labels:\n    b: "yes"\n' }),
      aliases: { both: ['a', 'b'] },
    };
    const injector = compileInjector(config, { env: { A: 'from-env' } });
    const injected = injector.inject({ pod: pod({ annotations: { 'inject.mesh.io/templates': 'both' } }), namespace: 'default', meshConfig: meshConfigWith() });
    expect((injected['metadata'] as Record<string, unknown>)['labels']).toEqual({ a: 'from-env', b: 'yes' });
  });

  test('grpc-agent gives each app container the bootstrap and no capture', () => {
    const injected = builtinInjector().inject({
      pod: pod({ annotations: { 'inject.mesh.io/templates': 'grpc-agent' } }),
      namespace: 'default',
      meshConfig: meshConfigWith(),
    });
    const spec = injected['spec'] as { containers: { name: string; env?: { name: string; value?: string }[] }[]; initContainers?: unknown };
    expect(spec.initContainers).toBeUndefined();
    expect(spec.containers.map((c) => c.name)).toEqual(['app', 'mesh-proxy']);
    expect(spec.containers[0]?.env).toContainEqual({ name: 'GRPC_XDS_BOOTSTRAP', value: '/etc/mesh/proxy/grpc-bootstrap.json' });
  });
});

describe('inject', () => {
  test('fills the namespace from the request, and uses it for the owner', () => {
    const input = pod();
    delete (input['metadata'] as Record<string, unknown>)['namespace'];
    const injected = builtinInjector().inject({ pod: input, namespace: 'shop', meshConfig: meshConfigWith() });
    expect((injected['metadata'] as Record<string, unknown>)['namespace']).toBe('shop');
    expect(JSON.stringify(injected)).toContain('kubernetes://apis/v1/namespaces/shop/pods/p');
  });

  test('a pod of 500 containers is injected', () => {
    const containers = Array.from({ length: 500 }, (_, i) => ({ name: `c${i}`, image: 'app:1', ports: [{ containerPort: 1000 + i }] }));
    const injected = builtinInjector().inject({ pod: pod({}, { containers }), namespace: 'default', meshConfig: meshConfigWith() });
    const names = ((injected['spec'] as Record<string, unknown>)['containers'] as { name: string }[]).map((c) => c.name);
    expect(names).toHaveLength(501);
    expect(names[500]).toBe('mesh-proxy');
    expect(uninjectPod(injected)).toEqual(pod({}, { containers }));
  });

  test('the proxy image override applies unless the pod names a full image', () => {
    const image = (p: Pod): unknown =>
      ((p['spec'] as Record<string, unknown>)['containers'] as { name: string; image: string }[]).find((c) => c.name === 'mesh-proxy')?.image;
    const injector = builtinInjector();
    expect(image(injector.inject({ pod: pod(), namespace: 'default', meshConfig: meshConfigWith(), proxyImage: 'r.example/proxy:9' }))).toBe(
      'r.example/proxy:9',
    );
    const named = pod({ annotations: { 'sidecar.mesh.io/proxyImage': 'mine.example/proxy:1' } });
    expect(image(injector.inject({ pod: named, namespace: 'default', meshConfig: meshConfigWith(), proxyImage: 'r.example/proxy:9' }))).toBe(
      'mine.example/proxy:1',
    );
  });

  test('the image type of the mesh config, the proxy config annotation or the pod annotation suffixes the tag (default: none)', () => {
    const image = (p: Pod, meshConfig = meshConfigWith()): unknown =>
      (
        (builtinInjector().inject({ pod: p, namespace: 'default', meshConfig })['spec'] as Record<string, unknown>)['containers'] as {
          name: string;
          image: string;
        }[]
      ).find((c) => c.name === 'mesh-proxy')?.image;
    const distroless = meshConfigWith('defaultConfig:\n  image:\n    imageType: distroless\n');
    expect(image(pod(), distroless)).toBe('docker.io/meshproject/proxyv2:latest-distroless');
    expect(image(pod({ annotations: { 'proxy.mesh.io/config': 'image:\n  imageType: debug\n' } }))).toBe('docker.io/meshproject/proxyv2:latest-debug');
    expect(image(pod({ annotations: { 'sidecar.mesh.io/proxyImageType': 'default' } }), distroless)).toBe('docker.io/meshproject/proxyv2:latest');
    expect(image(pod())).toBe('docker.io/meshproject/proxyv2:latest');
  });

  test('injectionPatch: RFC 6902 operations from the original to the injected pod, managed fields left out', () => {
    const original = pod({ managedFields: [{ manager: 'kubectl' }] });
    const injected = builtinInjector().inject({ pod: original, namespace: 'default', meshConfig: meshConfigWith() });
    const patch = injectionPatch(original, injected);
    expect(patch.some((op) => op.path.includes('managedFields'))).toBe(false);
    expect(patch).toContainEqual(expect.objectContaining({ op: 'add', path: '/spec/initContainers' }));
    expect(patch).toContainEqual(expect.objectContaining({ op: 'add', path: '/spec/containers/1' }));
  });

  test('injection copies what it changes and writes nothing it is given: a pod frozen all the way down injects the same, twice', () => {
    const input = pod(
      { labels: { app: 'reviews' }, annotations: { 'prometheus.io/scrape': 'true', 'traffic.sidecar.mesh.io/excludeInboundPorts': '9090' } },
      {
        containers: [
          { name: 'app', image: 'app:1', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { path: '/ready', port: 'http' } } },
        ],
        securityContext: { runAsUser: 1000 },
        volumes: [{ name: 'v', emptyDir: {} }],
      },
    );
    const injector = builtinInjector();
    const expected = builtinInjector().inject({ pod: structuredClone(input), namespace: 'default', meshConfig: meshConfigWith(), urlEnv: { EXTRA: 'x' } });
    const frozen = deepFreeze(structuredClone(input));
    for (let i = 0; i < 2; i++)
      expect(injector.inject({ pod: frozen, namespace: 'default', meshConfig: meshConfigWith(), urlEnv: { EXTRA: 'x' } })).toEqual(expected);
    // Re-injecting an injected pod, frozen too.
    expect(injector.inject({ pod: deepFreeze(structuredClone(expected)), namespace: 'default', meshConfig: meshConfigWith(), urlEnv: { EXTRA: 'x' } })).toEqual(
      expected,
    );
  });

  test('uninjecting a pod that was never injected changes nothing', () => {
    const input = pod({ labels: { 'security.mesh.io/tlsMode': 'mesh' } });
    expect(uninjectPod(input)).toEqual(input);
  });
});

describe('parseInjectorConfig', () => {
  test('the built-in config has the three templates and enabled policy', () => {
    const config = parseInjectorConfig(BUILTIN_INJECTOR_CONFIG);
    expect(Object.keys(config.templates).sort()).toEqual(['gateway', 'grpc-agent', 'sidecar']);
    expect(config.policy).toBe('enabled');
    expect(config.defaultTemplates).toEqual(['sidecar']);
  });

  test('defaults: empty config text means enabled, [sidecar], no templates', () => {
    expect(parseInjectorConfig({ config: '', values: '' })).toEqual({
      policy: 'enabled',
      defaultTemplates: ['sidecar'],
      templates: {},
      aliases: {},
      neverInjectSelector: [],
      alwaysInjectSelector: [],
      injectedAnnotations: {},
      values: {},
    });
  });

  test.each([
    ['config not YAML', { config: 'policy: [', values: '{}' }, /^injector config key "config": not YAML: /],
    ['a template that is not text', { config: 'templates:\n  sidecar: [1]\n', values: '{}' }, /^injector config key "config": templates\.sidecar: /],
    [
      'a selector with an unknown operator',
      { config: 'neverInjectSelector:\n- matchExpressions:\n  - {key: a, operator: Maybe}\n', values: '{}' },
      /neverInjectSelector\.0\.matchExpressions\.0\.operator: /,
    ],
    ['values not JSON', { config: '', values: '{' }, /^injector config key "values": not JSON: /],
    ['values not an object', { config: '', values: '[]' }, 'injector config key "values": must be a JSON object'],
  ])('%s', (_name, text, message) => {
    const error = thrown(() => parseInjectorConfig(text));
    expect(error.code).toBe('invalid-injector-config');
    expect(error.message).toMatch(message);
  });

  test('a bare template is the sidecar template of an enabled config', () => {
    expect(isWholeInjectorConfig('templates:\n  sidecar: x\n')).toBe(true);
    expect(isWholeInjectorConfig('spec:\n  containers: []\n')).toBe(false);
    const config = parseSingleTemplateConfig('spec: {}\n', '{"global":{}}');
    expect(config.templates).toEqual({ sidecar: 'spec: {}\n' });
    expect(config.policy).toBe('enabled');
    expect(config.values).toEqual({ global: {} });
  });
});
