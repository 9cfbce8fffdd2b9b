import { describe, expect, test } from '@jest/globals';
import { analyze, deployment, namespace, pod } from '../testing/fixtures.js';
import { imageAutoAnalyzer } from './image-auto-analyzer.js';

const autoProxy = {
  containers: [
    { name: 'app', image: 'app:1' },
    { name: 'mesh-proxy', image: 'auto' },
  ],
};
const gateway = (name: string, ns: string, labels: Record<string, string> = { app: name }): object => deployment(name, ns, labels, {}, autoProxy);
const injector = (name: string, selectors: object): object => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingWebhookConfiguration',
  metadata: { name: 'mesh-sidecar-injector' },
  webhooks: [{ name, clientConfig: {}, sideEffects: 'None', admissionReviewVersions: ['v1'], ...selectors }],
});
const byNamespaceLabel = injector('namespace.sidecar-injector.mesh.io', {
  namespaceSelector: { matchExpressions: [{ key: 'mesh-injection', operator: 'In', values: ['enabled'] }] },
  objectSelector: { matchExpressions: [{ key: 'sidecar.mesh.io/inject', operator: 'NotIn', values: ['false'] }] },
});

describe('injection.ImageAutoAnalyzer', () => {
  test('a Deployment with image: auto that no mesh webhook selects is a warning; a Pod with it is an error whatever the webhooks', () => {
    const objects = [
      byNamespaceLabel,
      namespace('on', { 'mesh-injection': 'enabled' }),
      namespace('off'),
      gateway('ingress', 'on'),
      gateway('opted-out', 'on', { app: 'x', 'sidecar.mesh.io/inject': 'false' }),
      gateway('ingress', 'off'),
      gateway('nowhere', 'missing'),
      pod('stuck', 'on', autoProxy),
    ];
    expect(analyze(imageAutoAnalyzer, objects)).toEqual([
      'Error [MSH0147] (Pod stuck.on) Pod stuck contains `image: auto` but does not match any mesh injection webhook selectors.',
      'Warning [MSH0146] (Deployment ingress.off) Deployment ingress contains `image: auto` but does not match any mesh injection webhook selectors.',
      'Warning [MSH0146] (Deployment nowhere.missing) Deployment nowhere contains `image: auto` but does not match any mesh injection webhook selectors.',
      'Warning [MSH0146] (Deployment opted-out.on) Deployment opted-out contains `image: auto` but does not match any mesh injection webhook selectors.',
    ]);
  });

  test("webhooks of other domains don't count; one without selectors selects everything; other images stay quiet", () => {
    const other = injector('sidecar-injector.example.com', {});
    expect(analyze(imageAutoAnalyzer, [other, namespace('n'), gateway('gw', 'n')])).toHaveLength(1);
    const everything = injector('everything.mesh.io', {});
    expect(analyze(imageAutoAnalyzer, [everything, namespace('n'), gateway('gw', 'n')])).toEqual([]);
    const plain = deployment('web', 'n', { app: 'web' }, {}, { containers: [{ name: 'mesh-proxy', image: 'mesh/proxyv2:1' }] });
    expect(analyze(imageAutoAnalyzer, [namespace('n'), plain, pod('p', 'n')])).toEqual([]);
  });
});
