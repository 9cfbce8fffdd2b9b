import { Option, type Command } from 'commander';
import { UsageError } from '../../runtime/index.js';
import type { MeshctlFlagDefaults } from './meshctl-defaults.js';
import type { XdsQuery } from '../../meshctl/index.js';
import { boolOption, describeDuration, durationFlag, intFlag } from '../flags.js';
import { DAEMON_POD_SELECTOR } from '../../names/index.js';

/** The XDS flag group as commander parses it. */
export interface XdsFlags {
  authority: string;
  certDir: string;
  insecure: boolean;
  plaintext: boolean;
  revision: string;
  timeout: number;
  xdsAddress: string;
  xdsLabel: string;
  xdsPort: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Adds the XDS flag group (seed 3): `--authority`, `--cert-dir`, `--insecure`, `--plaintext`,
 * `-r/--revision`, `--timeout`, `--xds-address`, `--xds-label`, `--xds-port`. Their defaults come
 * from the MESHCTL_* settings, else the MESHCONFIG file; a flag on the command line wins.
 */
export function addXdsFlags(command: Command, defaults: MeshctlFlagDefaults): Command {
  return command
    .option('--authority <string>', 'XDS Subject Alternative Name (for example meshd.mesh-system.svc)', defaults.string('authority'))
    .option('--cert-dir <string>', 'XDS Endpoint certificate directory', defaults.string('cert-dir'))
    .addOption(boolOption('--insecure', 'Skip server certificate and domain verification. (NOT SECURE!)', defaults.boolean('insecure')))
    .addOption(boolOption('--plaintext', 'Use plain-text HTTP/2 when connecting to server (no TLS).', defaults.boolean('plaintext')))
    .option('-r, --revision <string>', 'Control plane revision', '')
    .addOption(
      new Option('--timeout <duration>', 'The duration to wait before failing')
        .argParser(durationFlag)
        .default(DEFAULT_TIMEOUT_MS, describeDuration(DEFAULT_TIMEOUT_MS)),
    )
    .option('--xds-address <string>', 'XDS Endpoint', defaults.string('xds-address'))
    .option('--xds-label <string>', 'Daemon pod label selector', DAEMON_POD_SELECTOR)
    .addOption(new Option('--xds-port <int>', 'Daemon pod port').argParser(intFlag).default(defaults.port('xds-port')));
}

/** The query the flags describe; contradictions and out-of-range values name the flag (exit 64). */
export function xdsQueryOf(flags: XdsFlags, meshNamespace: string): XdsQuery {
  if (flags.plaintext && flags.certDir !== '') throw new UsageError('--plaintext and --cert-dir cannot be used together', { exitCode: 64 });
  if (flags.xdsPort < 1 || flags.xdsPort > 65535) throw new UsageError(`--xds-port ${flags.xdsPort}: expected a port from 1 to 65535`, { exitCode: 64 });
  if (flags.timeout <= 0) throw new UsageError(`--timeout ${describeDuration(flags.timeout)}: expected a positive duration`, { exitCode: 64 });
  if (flags.xdsAddress !== '' && !/^(\[[^\]]+\]|[^:[\]]+):\d{1,5}$/.test(flags.xdsAddress)) {
    throw new UsageError(`--xds-address "${flags.xdsAddress}": expected host:port`, { exitCode: 64 });
  }
  return {
    meshNamespace,
    revision: flags.revision,
    xdsLabel: flags.xdsLabel,
    xdsPort: flags.xdsPort,
    xdsAddress: flags.xdsAddress,
    timeoutMs: flags.timeout,
    security: { plaintext: flags.plaintext, certDir: flags.certDir, insecure: flags.insecure, authority: flags.authority },
  };
}
