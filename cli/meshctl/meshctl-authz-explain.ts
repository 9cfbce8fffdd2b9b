import { Command, Option } from 'commander';
import { UsageError } from '../../runtime/index.js';
import { stringArrayFlag, uint16Flag } from '../flags.js';
import type { MeshctlGlobalFlags } from './meshctl-global-flags.js';
import type { CliIo } from '../run-cli.js';

interface ExplainFlags {
  method: string;
  path: string;
  host?: string;
  header?: string[];
  token?: string;
  tokenFile?: string;
  from?: string;
  sourcePrincipal?: string;
  plaintext?: boolean;
  port?: number;
  address?: string;
  gateway: boolean;
  trustDomain: string;
  file?: string;
  output: 'text' | 'json';
}

const EXAMPLES = `
Examples:
  # Why does sleep get 403 from httpbin?
  meshctl x authz explain httpbin-5446f4d9b4-abcde.foo --from sleep-7bd9d9b4d8-xyz12.bar --path /headers

  # A request from outside the mesh, with a JWT, to port 8000
  meshctl x authz explain deploy/httpbin.foo --plaintext --port 8000 --token-file token.jwt

  # Against a saved config dump
  meshctl x authz explain -f httpbin.config_dump.json --address 10.0.1.10 --port 80 --source-principal spiffe://cluster.local/ns/bar/sa/sleep -o json
`;

/** `meshctl x authz explain`: one request through a proxy's live config (or `-f`), stage by stage, with the deciding policy or mode. */
export function newMeshctlAuthzExplainCommand(io: CliIo): Command {
  return new Command('explain')
    .argument('[pod]', '[<type>/]<name>[.<namespace>] (a VM: workloadentry/<name> or its proxy ID)')
    .description('Explain how the proxy of a pod decides one request: filter chain and mTLS mode, JWT, each RBAC policy, route, and the answer')
    .addHelpText('after', EXAMPLES)
    .option('--method <string>', 'The request method', 'GET')
    .option('--path <string>', 'The request path, with the query', '/')
    .option('--host <string>', 'The Host header (default: the pod address and port)')
    .addOption(new Option('--header <stringArray>', 'A request header name=value (repeatable)').argParser(stringArrayFlag))
    .option('--token <string>', 'A JWT sent as Authorization: Bearer')
    .option('--token-file <string>', 'A file holding the JWT')
    .option('--from <string>', 'The client pod or VM: its identity when it has a proxy, plain text otherwise')
    .option('--source-principal <string>', 'The client identity (mutual TLS): spiffe://<trust domain>/ns/<ns>/sa/<sa>')
    .option('--plaintext', 'A plain-text client outside the mesh (the default)')
    .addOption(new Option('--port <int>', 'The destination port (default: the first container port, else 80)').argParser(uint16Flag))
    .option('--address <string>', 'The destination address (default: the pod IP)')
    .option('--gateway', "The pod is a gateway: the request arrives on the listener of the port (default: from the proxy's node ID)", false)
    .option('--trust-domain <string>', 'The trust domain of --from identities', 'cluster.local')
    .option('-f, --file <string>', "The proxy config dump (JSON) to evaluate instead of the pod's")
    .addOption(new Option('-o, --output <string>', 'Output format').choices(['text', 'json']).default('text'))
    .action(async (target: string | undefined, flags: ExplainFlags, command: Command) => {
      if ((target === undefined) === (flags.file === undefined)) throw new UsageError('explain requires a pod or --file', { exitCode: 64 });
      const meshctl = await import('../../meshctl/index.js');
      const global = command.optsWithGlobals<MeshctlGlobalFlags>();
      const needsCluster = target !== undefined || flags.from !== undefined;
      const { request, explanation } = await meshctl.explainPod({
        ...flags,
        ...(target !== undefined ? { target } : {}),
        ...(needsCluster ? { kubeConfig: await meshctl.loadKubeClient(global) } : {}),
        namespace: global.namespace,
        meshNamespace: global.meshNamespace,
      });
      io.stdout(
        flags.output === 'json'
          ? `${JSON.stringify({ request: { ...request, now: request.now.toISOString() }, ...explanation }, null, 2)}\n`
          : meshctl.renderExplanation(request, explanation),
      );
    });
}
