import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, test } from '@jest/globals';
import { expectGolden, goldenCases } from '../../testing/golden.js';
import { buildPushContext } from '../model/index.js';
import { loadCase } from '../generators/testing/test-cases.js';
import { workloadOfProxy } from '../generators/proxy-workload.js';
import { loadEnvoyProtos, type EnvoyProtos } from '../index.js';
import { buildJwtAuthnFilter, JWT_AUTHN_TYPE } from './jwt-authn-builder.js';
import { loadSettings } from '../../runtime/index.js';
import { jwksRemoteFromSettings } from '../xds-settings.js';

const JWT = fileURLToPath(new URL('./testdata/jwt/', import.meta.url));

let protos: EnvoyProtos;
beforeAll(() => {
  protos = loadEnvoyProtos();
});

describe('jwt_authn from RequestAuthentication (golden)', () => {
  test.each(goldenCases(JWT))('%s', (name) => {
    const loaded = loadCase(JWT, `${name}.in.yaml`);
    const { model, proxy } = loaded;
    const push = buildPushContext(model);
    const workload = workloadOfProxy(push, proxy);
    const filter = buildJwtAuthnFilter(
      {
        proxy,
        push,
        ...(workload ? { workload } : {}),
        namespace: workload?.namespace ?? proxy.configNamespace,
        labels: workload?.labels ?? {},
        port: 8080,
        kind: 'sidecar-inbound',
      },
      push.requestAuthentications,
      { keySetFor: (rule) => rule.jwks ?? `{"keys":[{"kty":"RSA","kid":"fetched-for-${rule.issuer}","n":"AQAB","e":"AQAB"}]}` },
      loaded.daemonEnv ? jwksRemoteFromSettings(loadSettings('pilot-discovery', loaded.daemonEnv)) : {},
    );
    if (filter) {
      const { '@type': type, ...config } = filter.typed_config;
      expect(type).toBe(JWT_AUTHN_TYPE);
      protos.encodeAny(JWT_AUTHN_TYPE, config);
    }
    expectGolden(JWT, name, filter ?? null);
  });
});
