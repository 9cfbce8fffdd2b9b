import { describe, expect, test } from '@jest/globals';
import { DerError, TAG, decodeOid, decodeTime, derRead, derReadWhole, derOid, derSmallInteger, derTime, derUnsignedInteger } from './der.js';

describe('DER', () => {
  test.each(['1.2.840.10045.4.3.2', '2.5.29.17', '1.3.6.1.5.5.7.3.1', '2.999.3', '1.2.840.113549.1.9.14'])('OID %s round-trips', (oid) => {
    const der = derOid(oid);
    expect(decodeOid(der, derReadWhole(der, TAG.oid))).toBe(oid);
  });

  test('known OID encodings', () => {
    expect(derOid('1.2.840.10045.4.3.2').toString('hex')).toBe('06082a8648ce3d040302');
    expect(derOid('2.999.3').toString('hex')).toBe('0603883703');
  });

  test.each([
    [0, '020100'],
    [127, '02017f'],
    [128, '02020080'],
    [256, '02020100'],
  ])('integer %d', (value, hex) => {
    expect(derSmallInteger(value).toString('hex')).toBe(hex);
  });

  test('unsigned integers drop redundant leading zeros and keep a sign byte', () => {
    expect(derUnsignedInteger(Buffer.from([0, 0, 0x80])).toString('hex')).toBe('02020080');
    expect(derUnsignedInteger(Buffer.from([0, 0x7f])).toString('hex')).toBe('02017f');
  });

  test.each([
    ['2026-03-01T12:34:56Z', TAG.utcTime, '260301123456Z'],
    ['2049-12-31T23:59:59Z', TAG.utcTime, '491231235959Z'],
    ['2050-01-01T00:00:00Z', TAG.generalizedTime, '20500101000000Z'],
  ])('time %s', (iso, tag, text) => {
    const der = derTime(Date.parse(iso));
    const el = derReadWhole(der, tag);
    expect(der.subarray(el.start).toString('ascii')).toBe(text);
    expect(decodeTime(der, el)).toBe(Date.parse(iso));
  });

  test('long lengths', () => {
    const content = Buffer.alloc(300, 1);
    const der = Buffer.concat([Buffer.from([0x04, 0x82, 0x01, 0x2c]), content]);
    const el = derReadWhole(der, TAG.octetString);
    expect(el.end - el.start).toBe(300);
  });

  test.each([
    ['truncated', Buffer.from([0x30, 0x05, 0x02, 0x01])],
    ['overlong length form', Buffer.from([0x04, 0x81, 0x01, 0x00])],
    ['indefinite length', Buffer.from([0x30, 0x80, 0x00, 0x00])],
    ['empty', Buffer.alloc(0)],
  ])('refuses %s', (_name, der) => {
    expect(() => derRead(der)).toThrow(DerError);
  });
});
