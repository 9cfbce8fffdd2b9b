import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { fuzzParameters } from '../testing/fuzz.js';
import { decodeAdmissionReview } from './admission-review.js';
import { validateRequest } from './validation-webhook.js';

// The validation webhook's decision on an attacker's AdmissionReview: a decoded review or an error
// (answered as a denial), and for any request an allow or a denial with a message, never a throw.
const kinds = fc.constantFrom(
  'PeerAuthentication',
  'RequestAuthentication',
  'AuthorizationPolicy',
  'DestinationRule',
  'VirtualService',
  'Gateway',
  'ServiceEntry',
  'WorkloadEntry',
  'WorkloadGroup',
  'Pod',
  '',
  'Nope',
);
const request = fc.record({
  uid: fc.string(),
  kind: fc.record({
    group: fc.constantFrom('security.mesh.io', 'networking.mesh.io', '', 'x'),
    version: fc.constantFrom('v1beta1', 'v1alpha3', 'v1'),
    kind: kinds,
  }),
  operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT', ''),
  object: fc.oneof(
    fc.jsonValue(),
    fc.record({
      apiVersion: fc.constantFrom('security.mesh.io/v1beta1', 'networking.mesh.io/v1alpha3'),
      kind: kinds,
      metadata: fc.jsonValue(),
      spec: fc.jsonValue(),
    }),
  ),
});

describe('the validation webhook under fuzzing', () => {
  test('any body is decoded or refused with an error, never thrown', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          request.map((r) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: r })),
        ),
        (body) => {
          const decoded = decodeAdmissionReview(body);
          expect('error' in decoded || 'request' in decoded).toBe(true);
        },
      ),
      fuzzParameters(),
    );
  });

  test('any request gets an allow or a denial with a message', () => {
    fc.assert(
      fc.property(request, (r) => {
        const decoded = decodeAdmissionReview(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: r }));
        if ('error' in decoded) return;
        const { response } = validateRequest(decoded.request);
        expect(typeof response.allowed).toBe('boolean');
        if (!response.allowed) expect(response.message ?? '').not.toBe('');
      }),
      fuzzParameters(),
    );
  });

  test('the registry kinds are judged like the others: a ServiceEntry is allowed, or denied naming the field', () => {
    const review = (spec: unknown) =>
      validateRequest({
        uid: '1',
        kind: { group: 'networking.mesh.io', version: 'v1', kind: 'ServiceEntry' },
        operation: 'CREATE',
        object: { apiVersion: 'networking.mesh.io/v1', kind: 'ServiceEntry', metadata: { name: 'api', namespace: 'foo' }, spec },
      } as Parameters<typeof validateRequest>[0]).response;
    expect(review({ hosts: ['api.example.com'], resolution: 'DNS', ports: [{ number: 443, name: 'tls', protocol: 'TLS' }] }).allowed).toBe(true);
    const denied = review({ hosts: ['api.example.com'], resolution: 'STATIC', endpoints: [{ address: 'db.example.com' }] });
    expect(denied.allowed).toBe(false);
    expect(denied.message).toContain('spec.endpoints[0].address');
  });
});
