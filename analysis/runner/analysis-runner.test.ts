import { describe, expect, test } from '@jest/globals';
import { newMeshModel, type SourceSet } from '../../controllers/index.js';
import { apiVersionOf, type KindName } from '../../crds/index.js';
import type { KubeObject, Source } from '../../runtime/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { newRecordingLogger } from '../../testing/recording-logger.js';
import { formatMessage } from '../messages.js';
import { newAnalysisRunner } from './analysis-runner.js';

/** Sources that hold the given objects from the start, as the daemon's informers or folder serve them (valid or not). */
function staticSources(objects: readonly KubeObject[]): SourceSet {
  const sourceFor = (apiVersion: string, kind: string): Source<KubeObject> => {
    // Listed objects come without apiVersion and kind, as from an informer.
    const held = objects.filter((o) => o.kind === kind).map(({ apiVersion: _a, kind: _k, ...rest }) => rest as KubeObject);
    return {
      name: `${apiVersion}/${kind}`,
      store: { list: () => held, get: () => undefined },
      subscribe: () => () => undefined,
      waitForSync: () => Promise.resolve(),
      isSynced: () => true,
      start: () => Promise.resolve(),
    };
  };
  return { sourceFor, configMapSource: () => sourceFor('v1', 'ConfigMap'), runnables: [], isKubernetes: true };
}

const meshObject = (kind: KindName, name: string, spec: object): KubeObject =>
  ({ apiVersion: apiVersionOf(kind), kind, metadata: { name, namespace: 'shop' }, spec }) as KubeObject;

async function analyseOnce(objects: readonly KubeObject[]): Promise<string[]> {
  const runner = newAnalysisRunner({
    sources: staticSources(objects),
    model: newMeshModel({ domain: 'cluster.local', clusterId: 'c', useEndpointSlices: false }),
    rootNamespace: 'mesh-system',
    debounceMs: 100,
    debounceMaxMs: 1000,
    clock: new FakeClock(),
    log: newRecordingLogger([]),
  });
  const stop = new AbortController();
  const running = runner.runnable.start(stop.signal);
  await runner.runnable.waitForReady?.(stop.signal);
  stop.abort();
  await running.catch(() => undefined);
  return runner.latest().messages.map(formatMessage);
}

describe('the daemon analysis', () => {
  test('an invalid Gateway in the store (no validating webhook) is analysed: a VirtualService bound to it finds it', async () => {
    const gateway = meshObject('Gateway', 'shop-gateway', {
      selector: { mesh: 'ingressgateway' },
      servers: [
        { port: { number: 80, name: 'http', protocol: 'HTTP' }, hosts: ['reviews.example.com'] },
        { port: { number: 70000, name: 'bad', protocol: 'HTTP' }, hosts: ['other.example.com'] },
      ],
    });
    const bound = meshObject('VirtualService', 'public', {
      hosts: ['reviews.example.com'],
      gateways: ['shop-gateway'],
      http: [{ route: [{ destination: { host: 'reviews.example.com' } }] }],
    });
    const messages = await analyseOnce([gateway, bound]);
    expect(messages.filter((line) => line.includes('VirtualService public.shop'))).toEqual([]);
    // Schema errors are the config reconciler's to report, not the analysis's.
    expect(messages.filter((line) => line.includes('[MSH0106]') || line.includes('[MSH0001]'))).toEqual([]);
  });

  test('a Gateway the reference could not decode is not found, as in the reference', async () => {
    const gateway = meshObject('Gateway', 'shop-gateway', { servers: [{ port: { number: 'eighty', name: 'http', protocol: 'HTTP' }, hosts: ['*'] }] });
    const bound = meshObject('VirtualService', 'public', { hosts: ['reviews.example.com'], gateways: ['shop-gateway'] });
    expect(await analyseOnce([gateway, bound])).toContain('Error [MSH0101] (VirtualService public.shop) Referenced gateway not found: "shop-gateway"');
  });
});
