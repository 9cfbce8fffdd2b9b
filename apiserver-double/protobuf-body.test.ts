import { describe, expect, test } from '@jest/globals';
import { decodeProtobufBody } from './protobuf-body.js';
import { StatusError } from './status-error.js';

/** Bodies exactly as kubectl v1.35 sent them (from `kubectl -v=8`). */
const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

describe('decodeProtobufBody', () => {
  test('kubectl create configmap foo --from-literal=a=b', () => {
    const body = hex(`6b 38 73 00 0a 0f 0a 02 76 31 12 09 43 6f 6e 66 69 67 4d 61 70 12 1d 0a 13 0a 03 66 6f 6f 12 00
      1a 00 22 00 2a 00 32 00 38 00 42 00 12 06 0a 01 61 12 01 62 1a 00 22 00`);
    expect(decodeProtobufBody(body)).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'foo' }, data: { a: 'b' } });
  });

  test('kubectl create secret generic s1 --from-literal=k=v --type=mesh.io/x', () => {
    const body = hex(`6b 38 73 00 0a 0c 0a 02 76 31 12 06 53 65 63 72 65 74 12 27 0a 12 0a 02 73 31 12 00 1a 00 22 00
      2a 00 32 00 38 00 42 00 12 06 0a 01 6b 12 01 76 1a 09 6d 65 73 68 2e 69 6f 2f 78 1a 00 22 00`);
    expect(decodeProtobufBody(body)).toEqual({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, data: { k: 'dg==' }, type: 'mesh.io/x' });
  });

  test('kubectl create token with audiences, duration and a bound pod', () => {
    const body = hex(`6b 38 73 00 0a 28 0a 18 61 75 74 68 65 6e 74 69 63 61 74 69 6f 6e 2e 6b 38 73 2e 69 6f 2f 76 31
      12 0c 54 6f 6b 65 6e 52 65 71 75 65 73 74 12 38 0a 10 0a 00 12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 1e
      0a 02 61 31 0a 02 61 32 1a 11 0a 03 50 6f 64 12 02 76 31 1a 02 70 31 22 02 75 31 20 b0 09 1a 04 0a 00 12 00
      1a 00 22 00`);
    expect(decodeProtobufBody(body)).toEqual({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: ['a1', 'a2'], boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'u1' }, expirationSeconds: 1200 },
    });
  });

  test('unknown kinds and foreign bodies are 415', () => {
    const pod = hex('6b 38 73 00 0a 09 0a 02 76 31 12 03 50 6f 64 12 00');
    expect(() => decodeProtobufBody(pod)).toThrow(StatusError);
    expect(() => decodeProtobufBody(Buffer.from('{"kind":"Pod"}'))).toThrow(StatusError);
  });
});

describe('decodeProtobufBody: DeleteOptions', () => {
  // k8s envelope, TypeMeta {v1, DeleteOptions}, raw: gracePeriodSeconds=0, preconditions{uid=u1,
  // resourceVersion=7}, propagationPolicy=Background, dryRun=[All].
  const deleteOptions = (apiVersion: string): Buffer => {
    const typeMeta = Buffer.concat([Buffer.from([0x0a, apiVersion.length]), Buffer.from(apiVersion), Buffer.from([0x12, 13]), Buffer.from('DeleteOptions')]);
    const raw = hex(`08 00 12 07 0a 02 75 31 12 01 37 22 0a 42 61 63 6b 67 72 6f 75 6e 64 2a 03 41 6c 6c`);
    return Buffer.concat([hex('6b 38 73 00'), Buffer.from([0x0a, typeMeta.length]), typeMeta, Buffer.from([0x12, raw.length]), raw]);
  };

  test.each(['v1', 'meta.k8s.io/v1'])('%s DeleteOptions, as helm uninstall sends them, keep a zero grace period', (apiVersion) => {
    expect(decodeProtobufBody(deleteOptions(apiVersion))).toEqual({
      apiVersion,
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u1', resourceVersion: '7' },
      propagationPolicy: 'Background',
      dryRun: ['All'],
    });
  });

  test('orphanDependents and an absent grace period', () => {
    const raw = hex('18 01');
    const typeMeta = hex('0a 02 76 31 12 0d').toString('latin1') + 'DeleteOptions';
    const body = Buffer.concat([
      hex('6b 38 73 00'),
      Buffer.from([0x0a, typeMeta.length]),
      Buffer.from(typeMeta, 'latin1'),
      Buffer.from([0x12, raw.length]),
      raw,
    ]);
    expect(decodeProtobufBody(body)).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', orphanDependents: true });
  });
});
