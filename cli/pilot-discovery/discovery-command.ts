import { Command, InvalidArgumentError, Option } from 'commander';
import { describeList, durationFlag, floatFlag, listDefault, listenAddressFlag, nonNegativeIntFlag, stringSliceFlag, uint16Flag } from '../flags.js';

/** The flags of `pilot-discovery discovery`, as commander hands them over. */
export interface DiscoveryFlags {
  caCertFile: string;
  clusterID: string;
  clusterRegistriesNamespace: string;
  configDir: string;
  ctrlz_address: string;
  ctrlz_port: number;
  domain: string;
  grpcAddr: string;
  httpAddr: string;
  httpsAddr: string;
  keepaliveInterval: number;
  keepaliveMaxServerConnectionAge: number;
  keepaliveTimeout: number;
  orchconfig: string;
  orchApiBurst: number;
  orchApiQPS: number;
  meshConfig: string;
  monitoringAddr: string;
  namespace: string;
  networksConfig: string;
  plugins: string[];
  profile: boolean;
  registries: string[];
  resync: number;
  secureGRPCAddr: string;
  shutdownDuration: number;
  tlsCipherSuites: string[];
  tlsCertFile: string;
  tlsKeyFile: string;
  [logFlag: `log_${string}`]: unknown;
}

/** Go's max duration: the seed's default for --keepaliveMaxServerConnectionAge. */
const MAX_CONNECTION_AGE = '2562047h47m16.854775807s';

export const CIPHER_SUITES = {
  preferred: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA',
    'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA',
    'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256',
    'TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA',
    'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA',
    'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    'TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA',
    'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
    'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
    'TLS_RSA_WITH_3DES_EDE_CBC_SHA',
    'TLS_RSA_WITH_AES_128_CBC_SHA',
    'TLS_RSA_WITH_AES_128_GCM_SHA256',
    'TLS_RSA_WITH_AES_256_CBC_SHA',
    'TLS_RSA_WITH_AES_256_GCM_SHA384',
  ],
  insecure: [
    'TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256',
    'TLS_ECDHE_ECDSA_WITH_RC4_128_SHA',
    'TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256',
    'TLS_ECDHE_RSA_WITH_RC4_128_SHA',
    'TLS_RSA_WITH_AES_128_CBC_SHA256',
    'TLS_RSA_WITH_RC4_128_SHA',
  ],
} as const;

const KNOWN_CIPHER_SUITES: ReadonlySet<string> = new Set([...CIPHER_SUITES.preferred, ...CIPHER_SUITES.insecure]);
export interface DiscoveryCommandDefaults {
  /** `--namespace` default: `${POD_NAMESPACE}`, itself `mesh-system` by default. */
  namespace: string;
  /** `--clusterID` default: `${CLUSTER_ID}`. */
  clusterID: string;
}

export function newDiscoveryCommand(defaults: DiscoveryCommandDefaults, run: (flags: DiscoveryFlags, command: Command) => Promise<void>): Command {
  const command = new Command('discovery')
    .description('Start Mesh proxy discovery service.')
    .option('--caCertFile <string>', 'File containing the x509 Server CA Certificate', '')
    .option('--clusterID <string>', 'The ID of the cluster that this instance resides', defaults.clusterID)
    .option('--clusterRegistriesNamespace <string>', 'Namespace for ConfigMap which stores clusters configs', 'mesh-system')
    .option(
      '--configDir <string>',
      'Directory to watch for updates to config yaml files. If specified, the files will be used as the source of config, rather than a CRD client.',
      '',
    )
    .option('--ctrlz_address <string>', "The IP Address to listen on for the ControlZ introspection facility. Use '*' to indicate all addresses.", 'localhost')
    .option('--ctrlz_port <uint16>', 'The IP port to use for the ControlZ introspection facility', uint16Flag, 9876)
    .option('--domain <string>', 'DNS domain suffix', 'cluster.local')
    .option('--grpcAddr <string>', 'Discovery service gRPC address', listenAddressFlag, ':15010')
    .option('--httpAddr <string>', 'Discovery service HTTP address', listenAddressFlag, ':8080')
    .option('--httpsAddr <string>', 'Injection and validation service HTTPS address', listenAddressFlag, ':15017')
    .addOption(
      durationOption(
        '--keepaliveInterval <duration>',
        'The time interval if no activity on the connection it pings the peer to see if the transport is alive',
        '30s',
      ),
    )
    .addOption(
      durationOption(
        '--keepaliveMaxServerConnectionAge <duration>',
        'Maximum duration a connection will be kept open on the server before a graceful close.',
        MAX_CONNECTION_AGE,
      ),
    )
    .addOption(
      durationOption(
        '--keepaliveTimeout <duration>',
        'After having pinged for keepalive check, the client/server waits for a duration of keepaliveTimeout and if no activity is seen even after that the connection is closed.',
        '10s',
      ),
    )
    .option('--orchconfig <string>', 'Use a orchestrator configuration file instead of in-cluster configuration', '')
    .option('--orchApiBurst <int>', 'Maximum burst for throttle when communicating with the orchestrator API; Must be non-negative', nonNegativeIntFlag, 160)
    .option('--orchApiQPS <float32>', 'Maximum QPS when communicating with the orchestrator API', positiveNumber(floatFlag), 80)
    .option('--meshConfig <string>', 'File name for Mesh configuration. If not specified, a default mesh will be used.', './etc/mesh/config/mesh')
    .option('--monitoringAddr <string>', "HTTP address to use for pilot's self-monitoring information", listenAddressFlag, ':15014')
    .option(
      '-n, --namespace <string>',
      'Select a namespace where the controller resides. If not set, uses ${POD_NAMESPACE} environment variable',
      defaults.namespace,
    )
    .option(
      '--networksConfig <string>',
      'File name for Mesh networks configuration. If not specified, a default mesh networks will be used.',
      '/etc/mesh/config/meshNetworks',
    )
    .addOption(
      sliceOption(
        '--plugins <stringSlice>',
        'comma separated list of networking plugins to enable',
        ['ext_authz', 'authn', 'authz'],
        ['ext_authz', 'authn', 'authz'],
      ),
    )
    .option('--profile', 'Enable profiling via web interface host:port/debug/pprof', false)
    .addOption(
      sliceOption(
        '--registries <stringSlice>',
        'Comma separated list of platform service registries to read from (choose one or more from {orch, Mock})',
        ['orch'],
        ['orch', 'Mock'],
      ),
    )
    .addOption(durationOption('--resync <duration>', 'Controller resync interval', '1m0s'))
    .option('--secureGRPCAddr <string>', 'Discovery service secured gRPC address', listenAddressFlag, ':15012')
    .addOption(durationOption('--shutdownDuration <duration>', 'Duration the discovery server needs to terminate gracefully', '10s'))
    .addOption(
      new Option(
        '--tls-cipher-suites <stringSlice>',
        `Comma-separated list of cipher suites for mesh TLS server. If omitted, the default Go cipher suites will be used. \nPreferred values: ${CIPHER_SUITES.preferred.join(', ')}. \nInsecure values: ${CIPHER_SUITES.insecure.join(', ')}.`,
      )
        .argParser(checkedSlice('--tls-cipher-suites', KNOWN_CIPHER_SUITES))
        .default(listDefault([]), '[]'),
    )
    .option('--tlsCertFile <string>', 'File containing the x509 Server Certificate', '')
    .option('--tlsKeyFile <string>', 'File containing the x509 private key matching --tlsCertFile', '');
  return command.action((flags: DiscoveryFlags, cmd: Command) => run(flags, cmd));
}

function durationOption(flags: string, description: string, defaultText: string): Option {
  return new Option(flags, description).argParser(durationFlag).default(durationFlag(defaultText), defaultText);
}

function sliceOption(flags: string, description: string, defaults: string[], allowed?: string[]): Option {
  const parser = allowed ? checkedSlice(flags.split(' ')[0] ?? flags, new Set(allowed)) : stringSliceFlag;
  return new Option(flags, description).argParser(parser).default(listDefault(defaults), describeList(defaults));
}

function checkedSlice(flag: string, allowed: ReadonlySet<string>) {
  return (value: string, previous: string[] | undefined): string[] => {
    const items = stringSliceFlag(value, previous);
    const unknown = items.filter((item) => !allowed.has(item));
    if (unknown.length > 0) {
      throw new InvalidArgumentError(`unknown value ${unknown.map((v) => `"${v}"`).join(', ')} for ${flag}: expected ${[...allowed].join(', ')}`);
    }
    return items;
  };
}

function positiveNumber(parse: (value: string) => number) {
  return (value: string): number => {
    const parsed = parse(value);
    if (parsed <= 0) throw new InvalidArgumentError(`expected a positive number, got "${value}"`);
    return parsed;
  };
}
