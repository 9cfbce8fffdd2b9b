import { describe, expect, test } from '@jest/globals';
import { UsageError } from './errors.js';
import { parseListenAddress, parsePort } from './listen-address.js';

describe('parseListenAddress', () => {
  test.each([
    [':15014', { host: '0.0.0.0', port: 15014 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:9876', { host: 'localhost', port: 9876 }],
    ['[::1]:8080', { host: '::1', port: 8080 }],
    ['[::]:15010', { host: '::', port: 15010 }],
    ['mesh.example:65535', { host: 'mesh.example', port: 65535 }],
  ])('%s', (address, expected) => {
    expect(parseListenAddress(address)).toEqual(expected);
  });

  test.each([
    ['15014', /missing port/],
    [':', /invalid port/],
    ['host:', /invalid port/],
    [':http', /invalid port/],
    [':65536', /invalid port/],
    [':-1', /invalid port/],
    ['::1:8080', /brackets/],
  ])('rejects %s as a usage error', (address, message) => {
    expect(() => parseListenAddress(address)).toThrow(UsageError);
    expect(() => parseListenAddress(address)).toThrow(message);
  });
});

describe('parsePort', () => {
  test('accepts 0 to 65535 and names the input otherwise', () => {
    expect(parsePort('0')).toBe(0);
    expect(parsePort('65535')).toBe(65535);
    expect(() => parsePort('1e3', '--ctrlz_port')).toThrow('invalid port in "--ctrlz_port"');
  });
});
