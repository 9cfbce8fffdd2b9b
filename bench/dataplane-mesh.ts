/**
 * One part of the data-plane benchmark's mesh, as a child process of its own so that each hop's
 * CPU is measured apart: the backend, the server sidecar (mutual TLS, jwt_authn, RBAC) or the
 * client sidecar. The parent sends what to start (the part, the workload certificate, the
 * policies); the child answers with its address and, on request, its CPU time.
 */
import { jwtPolicies, proxyUrlOf, startBackend, startSidecar, type SidecarSide } from '../dataplane/testing/two-sidecars-fixture.js';
import { newPhaseProfiler } from './phase-profiler.js';

export type MeshPart = 'backend' | SidecarSide;

export interface PartSetup {
  readonly part: MeshPart;
  readonly subnet: number;
  /** The workload certificate and key (sidecars), PEM. */
  readonly certificateChain: string;
  readonly privateKey: string;
  readonly rootPem: string;
  readonly issuer: string;
  readonly jwks: string;
}

/** `profile`: a CPU profile from now until `profile-end`, written as `<dir>/<name>.cpuprofile`. */
export type PartCommand =
  { cmd: 'start'; setup: PartSetup } | { cmd: 'cpu' } | { cmd: 'profile'; dir: string; name: string } | { cmd: 'profile-end' } | { cmd: 'exit' };
export type PartMessage = { kind: 'ready'; proxyUrl?: string } | { kind: 'cpu'; user: number; system: number };

async function start(setup: PartSetup): Promise<{ proxyUrl?: string; close(): Promise<void> }> {
  if (setup.part === 'backend') return startBackend(setup.subnet);
  const secrets = {
    certificates: new Map([['default', { certificateChain: setup.certificateChain, privateKey: setup.privateKey }]]),
    trustedCas: new Map([['ROOTCA', setup.rootPem]]),
  };
  const sidecar = await startSidecar(setup.part, { subnet: setup.subnet, serverPolicies: jwtPolicies(setup.issuer, setup.jwks) }, secrets);
  return { ...(setup.part === 'client' ? { proxyUrl: proxyUrlOf(sidecar) } : {}), close: () => sidecar.plane.stop() };
}

let running: { close(): Promise<void> } | undefined;
let endProfile: (() => void) | undefined;
process.on('message', (message: PartCommand) => {
  if (message.cmd === 'profile') {
    void newPhaseProfiler(message.dir).then(async (profiler) => {
      await profiler.around(message.name, () => new Promise<void>((resolve) => (endProfile = resolve)));
      await profiler.close();
    });
    return;
  }
  if (message.cmd === 'profile-end') return endProfile?.();
  if (message.cmd === 'start') {
    void start(message.setup).then((started) => {
      running = started;
      process.send?.({ kind: 'ready', ...(started.proxyUrl ? { proxyUrl: started.proxyUrl } : {}) } satisfies PartMessage);
    });
  } else if (message.cmd === 'cpu') {
    const usage = process.cpuUsage();
    process.send?.({ kind: 'cpu', user: usage.user, system: usage.system } satisfies PartMessage);
  } else void (running?.close() ?? Promise.resolve()).then(() => process.exit(0));
});
