import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { MeshError } from '../../runtime/index.js';
import { fuzzParameters } from '../../testing/fuzz.js';
import { parseAndVerifyCsr, verifyCsrDer } from './csr.js';

// The CA's CSR parser on an attacker's bytes: a typed error naming what is wrong, never another
// kind of throw (a crash would end the CA's request handling).
function expectTypedRefusal(parse: () => unknown): void {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(MeshError);
  }
}

describe('the CSR parser under fuzzing', () => {
  test('any PEM-looking text is parsed or refused with a MeshError', () => {
    const pem = fc.oneof(
      fc.string(),
      fc
        .uint8Array({ maxLength: 600 })
        .map((bytes) => `-----BEGIN CERTIFICATE REQUEST-----\n${Buffer.from(bytes).toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`),
    );
    fc.assert(
      fc.property(pem, (text) => expectTypedRefusal(() => parseAndVerifyCsr(text))),
      fuzzParameters(),
    );
  });

  test('any DER bytes, including a truncated or bit-flipped real CSR prefix, are refused with a MeshError', () => {
    // A DER SEQUENCE header with a plausible length, then anything: the shape ASN.1 parsers trip on.
    const der = fc.oneof(
      fc.uint8Array({ maxLength: 800 }),
      fc.uint8Array({ maxLength: 400 }).map((tail) => Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x0a]), Buffer.from(tail)])),
    );
    fc.assert(
      fc.property(der, (bytes) => expectTypedRefusal(() => verifyCsrDer(Buffer.from(bytes)))),
      fuzzParameters(),
    );
  });
});
