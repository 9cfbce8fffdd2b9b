import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../../testing/golden.js';
import { consistent } from '../../testing/consistent.js';
import { jsonToStruct, loadEnvoyProtos, parseProxy, type EnvoyProtos, type GenerateRequest } from '../../index.js';
import { PushMemoMap } from '../../encoding/index.js';
import { caseGeneratorOptions, generateSnapshot, loadCase } from '../testing/test-cases.js';
import { newSidecarCdsGenerator, newSidecarEdsGenerator, newSidecarLdsGenerator, newSidecarRdsGenerator } from '../index.js';
import { buildPushContext } from '../../model/index.js';
import { generateRequest } from '../../testing/generate-request.js';

const TESTDATA = fileURLToPath(new URL('./testdata/lds/', import.meta.url));
const FULL: GenerateRequest = generateRequest({ names: [], full: true, configsUpdated: [] });

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

describe('sidecar LDS golden files', () => {
  const cases = goldenCases(TESTDATA);
  test('there are cases for each mode', () => {
    expect(cases.length).toBeGreaterThanOrEqual(6);
  });

  test.each(cases)('%s', (name) => {
    const loaded = loadCase(TESTDATA, `${name}.in.yaml`);
    const { model, proxy } = loaded;
    const options = caseGeneratorOptions(loaded);
    const generators = {
      lds: newSidecarLdsGenerator(options),
      rds: newSidecarRdsGenerator(options),
      cds: newSidecarCdsGenerator(options),
      eds: newSidecarEdsGenerator(options),
    };
    const snapshot = generateSnapshot(proxy, buildPushContext(model), generators, protos);
    expect(consistent(snapshot)).toEqual([]);
    expectGolden(TESTDATA, name, snapshot.listeners);
  });

  test('proxies of one namespace share outbound listeners only with those that use allocated addresses alike', () => {
    const { model, proxy } = loadCase(TESTDATA, 'auto-allocation.in.yaml');
    const push = buildPushContext(model);
    const ofPush: GenerateRequest = { ...FULL, memo: new PushMemoMap() };
    const lds = newSidecarLdsGenerator();
    const plain = parseProxy({
      id: 'sidecar~10.0.0.8~web-1.foo~foo.svc.cluster.local',
      metadata: jsonToStruct({ NAMESPACE: 'foo', INSTANCE_IPS: '10.0.0.8' }),
    });
    const prefixes = (target: typeof proxy) => {
      const listener = lds.generate(target, push, ofPush)?.resources.find((resource) => resource.name === '0.0.0.0_5432');
      const chains = (listener?.resource as { filter_chains: { filter_chain_match?: { prefix_ranges: { address_prefix: string }[] } }[] }).filter_chains;
      return chains.flatMap((chain) => chain.filter_chain_match?.prefix_ranges.map((range) => range.address_prefix) ?? []);
    };
    expect(prefixes(plain)).toEqual(['192.0.2.20']);
    expect(prefixes(proxy)).toHaveLength(3);
    expect(prefixes(plain)).toEqual(['192.0.2.20']);
  });

  test('what the listeners leave out is reported as the push findings: a TCP chain matching an earlier one, a proxy without a workload', () => {
    const { model, proxy } = loadCase(TESTDATA, 'tcp-conflict.in.yaml');
    const found: string[] = [];
    const findings = { add: (condition: string, key: string) => found.push(`${condition} ${key}`) };
    const result = newSidecarLdsGenerator().generate(proxy, buildPushContext(model), { ...FULL, findings });
    const listener = result?.resources.find((resource) => resource.name === '0.0.0.0_5432')?.resource as { filter_chains: { name: string }[] };
    expect(listener.filter_chains.map((chain) => chain.name)).toEqual(['outbound|5432||billing.db.example.com']);
    expect(found.sort()).toEqual(['outbound-tcp-over-tcp 0.0.0.0_5432', 'proxy-without-workload sleep-1.foo']);
  });

  test('listeners do not depend on anything but the push for the outbound side: cached, inbound not', () => {
    const { model, proxy } = loadCase(TESTDATA, 'no-policy.in.yaml');
    const result = newSidecarLdsGenerator().generate(proxy, buildPushContext(model), FULL);
    expect(result?.resources.filter((r) => r.cacheKey === undefined).map((r) => r.name)).toEqual(['virtualInbound']);
    expect(newSidecarLdsGenerator().generate(proxy, buildPushContext(model), { ...FULL, full: false })).toBeUndefined();
  });
});
