import { describe, expect, test } from '@jest/globals';
import { credentialResourceName, parseCredentialResource } from './credential-names.js';

describe('credential resource names', () => {
  test.each([
    ['cred', 'kubernetes://cred'],
    ['foo/cred', 'kubernetes://foo/cred'],
    ['kubernetes://cred', 'kubernetes://cred'],
    ['default', 'default'],
    ['ROOTCA', 'ROOTCA'],
    ['sds://custom', 'sds://custom'],
  ])('%s → %s', (name, resource) => expect(credentialResourceName(name)).toBe(resource));

  test.each([
    ['kubernetes://cred', { namespace: 'gw-ns', name: 'cred', caOnly: false }],
    ['kubernetes://foo/cred', { namespace: 'foo', name: 'cred', caOnly: false }],
    ['kubernetes://cred-cacert', { namespace: 'gw-ns', name: 'cred-cacert', caOnly: true }],
    ['kubernetes://foo/cred-cacert', { namespace: 'foo', name: 'cred-cacert', caOnly: true }],
  ])('%s is read in the right namespace', (resource, expected) => {
    expect(parseCredentialResource(resource, 'gw-ns')).toEqual({ resourceName: resource, ...expected });
  });

  test.each(['cred', 'default', 'kubernetes://', 'kubernetes://a/b/c', 'kubernetes:///cred', 'kubernetes://foo/'])(
    '%s is not a Secret resource',
    (resource) => {
      expect(parseCredentialResource(resource, 'gw-ns')).toBeUndefined();
    },
  );
});
