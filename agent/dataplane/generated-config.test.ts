import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { loadEnvoyProtos, type EnvoyProtos } from '../../xds/envoy-protos.js';
import { buildPushContext, newSidecarCdsGenerator, newSidecarEdsGenerator, newSidecarRdsGenerator } from '../../xds/generators/index.js';
import { listCases, loadCase } from '../../xds/generators/test-cases.js';
import { simulateProxyConfig } from './simulation-support.js';

const TESTDATA = fileURLToPath(new URL('../../xds/generators/testdata/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

describe('the embedded data plane accepts what the daemon generates', () => {
  test.each(listCases(TESTDATA))('sidecar golden case %s', (name) => {
    const { model, proxy } = loadCase(TESTDATA, `${name}.in.yaml`);
    const snapshot = simulateProxyConfig(protos, [newSidecarCdsGenerator(), newSidecarEdsGenerator(), newSidecarRdsGenerator()], proxy, buildPushContext(model));
    expect(snapshot.resources.clusters.size).toBeGreaterThan(0);
  });
});
