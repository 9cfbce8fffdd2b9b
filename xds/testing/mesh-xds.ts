import { validateResource, type TypedResource } from '../../crds/index.js';
import { newMetrics, newNopLogger } from '../../runtime/index.js';
import type { MeshModelWriter } from '../../controllers/index.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { EnvoyProtos } from '../envoy/envoy-protos.js';
import { buildPushContext, type PushContext } from '../model/index.js';
import { newMeshGenerators } from '../mesh-generators.js';
import { pushRequestOf, type PushChange } from '../push/push-request.js';
import { newInboundSecurityFilters } from '../security/index.js';
import { newXdsServer, type XdsServer } from '../xds-server.js';
import { DEFAULT_TUNING } from './test-support.js';

/** An ADS server with the mesh's own generators over a model, on a loopback port, with a fake clock. */
export interface MeshXds {
  readonly xds: XdsServer<PushContext>;
  readonly clock: FakeClock;
  readonly port: number;
  /** A push request (full, "anything may have changed" unless told), past the debounce. */
  push(request?: Partial<PushChange>): void;
  close(): Promise<void>;
}

export async function startMeshXds(protos: EnvoyProtos, model: MeshModelWriter): Promise<MeshXds> {
  const clock = new FakeClock();
  const xds = newXdsServer<PushContext>({
    protos,
    generators: newMeshGenerators({ securityFilters: newInboundSecurityFilters({ jwks: { keySetFor: () => '{"keys":[]}' } }) }),
    buildPushContext: () => buildPushContext(model),
    isReady: () => true,
    tuning: DEFAULT_TUNING,
    transport: { keepaliveIntervalMs: 30_000, keepaliveTimeoutMs: 10_000, maxConnectionAgeMs: 2 ** 53, maxRecvMsgSize: 4 * 1024 * 1024, maxStreams: 1000 },
    grpcAddr: '127.0.0.1:0',
    clock,
    metrics: newMetrics('pilot-discovery'),
    log: newNopLogger('ads'),
    shutdownTimeoutMs: 1000,
    newStreamsPerSecond: 0,
  });
  const controller = new AbortController();
  const running = xds.runnables.map((runnable) => runnable.start(controller.signal));
  await xds.plaintext.waitForReady();
  return {
    xds,
    clock,
    port: xds.plaintext.port(),
    push(request = {}) {
      xds.configUpdate(pushRequestOf({ full: true, configsUpdated: [], reason: 'config', startedAt: clock.now(), ...request }));
      clock.advance(DEFAULT_TUNING.debounceAfterMs);
    },
    async close() {
      controller.abort();
      await Promise.allSettled(running);
    },
  };
}

/** An AuthorizationPolicy of `foo` denying the `httpbin` pods to callers from `bar`. */
export const DENY_HTTPBIN_FROM_BAR = {
  apiVersion: 'security.mesh.io/v1beta1',
  kind: 'AuthorizationPolicy',
  metadata: { name: 'deny-bar', namespace: 'foo' },
  spec: { selector: { matchLabels: { app: 'httpbin' } }, action: 'DENY', rules: [{ from: [{ source: { namespaces: ['bar'] } }] }] },
} as const;

/** Validates a policy as the daemon does and applies it to the model's config store; throws on a problem. */
export function applyValidated(model: MeshModelWriter, object: unknown): void {
  const result = validateResource(object);
  if (result.errors.length > 0 || !result.resource) throw new Error(`invalid test policy: ${JSON.stringify(result.errors)}`);
  model.configStore.apply(result.resource as TypedResource);
}
