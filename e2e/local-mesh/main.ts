/**
 * `npm run local`: the whole mesh on this machine, until Ctrl-C. Prints the addresses and curl
 * commands to try, including the seed's policies shipped in `deploy/samples/policies`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { startLocalMesh } from './local-mesh.js';

const workDir = resolve('var/local-mesh');
rmSync(workDir, { recursive: true, force: true });
mkdirSync(workDir, { recursive: true });
const verbose = process.argv.includes('--verbose');
// `--kubernetes`: the API server double holds the config, applied with kubectl; meshctl works against it.
const kubernetes = process.argv.includes('--kubernetes');
console.log('starting the local mesh (daemon, agents with embedded data planes, sample backends, token issuer)…');
const mesh = await startLocalMesh({
  workDir,
  issuerPort: 15080,
  fixedPorts: true,
  debounce: '100ms',
  orchestrator: kubernetes ? 'kubernetes' : 'folder',
  log: (line) => {
    if (verbose || /\t(warn|error)\t/.test(line)) console.log(line);
  },
});
await mesh.waitReady(60_000);
const pod = (namespace: string, serves: boolean): string =>
  mesh.workloads.find((workload) => workload.namespace === namespace && workload.serves === serves && workload.kind !== 'router')?.podIp ?? '?';
const apply = (file: string): string =>
  mesh.kubeconfigPath ? `kubectl apply -f deploy/samples/policies/${file}` : `cp deploy/samples/policies/${file} ${mesh.configDir}/`;
const gateway = mesh.workloads.find((workload) => workload.kind === 'router')?.podIp ?? '?';
console.log(`
The local mesh is up (Ctrl-C stops everything).

  daemon        xDS 127.0.0.1:15010 (plain) and :15012 (TLS + CA), debug http://127.0.0.1:8080/debug/syncz, metrics :15014
  token issuer  ${mesh.issuer.url}  (end-user token: curl -s ${mesh.issuer.url}/token)
${
  mesh.kubeconfigPath
    ? `  orchestrator  the API server double; kubectl and meshctl work against it after:
                  export KUBECONFIG=${mesh.kubeconfigPath}
                then: kubectl get pods -A; node bin/meshctl.js ps; node bin/meshctl.js pc cluster sleep-foo.foo`
    : `  config folder ${mesh.configDir}  (write a policy file here to apply it, delete it to remove it)`
}

  pods (sidecar on the pod address, the app behind it):
${mesh.workloads.map((workload) => `    ${`${workload.namespace}/${workload.name}`.padEnd(34)} ${workload.podIp.padEnd(12)} ${workload.kind === 'none' ? 'no sidecar' : workload.kind}`).join('\n')}

Try (a meshed client sends to its sidecar's outbound port; an unmeshed one goes to the pod address):
  curl -x http://${pod('foo', false)}:15001 http://httpbin.bar:8000/headers       # foo → bar, mutual TLS, see X-Forwarded-Client-Cert
  curl http://${pod('bar', true)}:8080/ip                                     # legacy (unmeshed) → bar
  curl http://${gateway}:8080/headers                                      # through the ingress gateway

Seed 1 policies:
  ${apply('mesh-wide-strict.yaml')}
  curl http://${pod('foo', true)}:8080/ip          # now fails: curl code 000, exit 56
  ${apply('ingress-jwt.yaml')}
  curl http://${gateway}:8080/headers              # 403 without a token
  curl -H "Authorization: Bearer $(curl -s ${mesh.issuer.url}/token)" http://${gateway}:8080/headers   # 200
`);
const stop = async (): Promise<void> => {
  console.log('stopping…');
  await mesh.stop();
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
