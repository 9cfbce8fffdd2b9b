import type { Gateway, GatewayServer, ServerTlsSettings } from './gateway-schema.js';
import { hostNameProblem, isDns1123Label } from './dns-names.js';
import { isIpAddress } from './ip-address.js';
import { listWords } from './common-schemas.js';
import { unixSocketProblem } from './validate-shared.js';
import type { IssueSink, Path } from './validation-issue.js';

export const GATEWAY_PROTOCOLS = ['HTTP', 'HTTPS', 'HTTP2', 'GRPC', 'GRPC-WEB', 'TCP', 'TLS', 'MONGO', 'REDIS', 'MYSQL'] as const;
const HTTP_PROTOCOLS: ReadonlySet<string> = new Set(['HTTP', 'HTTP2', 'GRPC', 'GRPC-WEB']);
const TLS_PROTOCOLS: ReadonlySet<string> = new Set(['HTTPS', 'TLS']);
const UNIX_PREFIX = 'unix://';

/** Cipher suites the proxy's TLS library accepts for gateway servers. */
const CIPHER_SUITES: ReadonlySet<string> = new Set([
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'ECDHE-ECDSA-AES128-SHA',
  'ECDHE-RSA-AES128-SHA',
  'ECDHE-ECDSA-AES256-SHA',
  'ECDHE-RSA-AES256-SHA',
  'AES128-GCM-SHA256',
  'AES256-GCM-SHA384',
  'AES128-SHA',
  'AES256-SHA',
  'DES-CBC3-SHA',
]);

function isKnownCipher(suite: string): boolean {
  // Operator expressions such as "-AES128-SHA" or "[A|B]" pass through to the TLS library unchecked.
  return suite === '' || suite === 'ALL' || !/^[A-Za-z0-9]/.test(suite) || CIPHER_SUITES.has(suite);
}

function gatewayHostProblem(host: string): string | undefined {
  const slash = host.indexOf('/');
  let name = host;
  if (slash >= 0) {
    const namespace = host.slice(0, slash);
    name = host.slice(slash + 1);
    if (namespace === '' || name === '') return `expected "namespace/host" with both parts non-empty, got "${host}"`;
    if (namespace !== '*' && namespace !== '.' && !isDns1123Label(namespace)) {
      return `expected "*", "." or a namespace name before '/', got "${namespace}"`;
    }
  }
  if (name === '*' || isIpAddress(name)) return undefined;
  if (name.includes('*') && !name.startsWith('*.')) {
    return `expected a wildcard only as the whole first label (such as *.example.com), got "${name}"`;
  }
  if (!name.includes('.')) {
    return `expected a fully qualified host name or a wildcard such as *.example.com, got short name "${name}"`;
  }
  return hostNameProblem(name);
}

const CERTIFICATE_FIELDS = ['serverCertificate', 'privateKey', 'caCertificates', 'tlsCertificates', 'credentialName', 'credentialNames'] as const;

function checkServerTls(sink: IssueSink, path: Path, tls: ServerTlsSettings): void {
  const mode = tls.mode ?? 'PASSTHROUGH';
  if ((tls.minProtocolVersion === 'TLSV1_0' || tls.minProtocolVersion === 'TLSV1_1') && (tls.cipherSuites ?? []).length === 0) {
    sink.warn([...path, 'minProtocolVersion'], 'TLS versions below TLSV1_2 need compatible cipherSuites: the default suites no longer include any for them');
  }
  const seen = new Set<string>();
  (tls.cipherSuites ?? []).forEach((suite, i) => {
    if (!isKnownCipher(suite)) {
      sink.warn([...path, 'cipherSuites', i], `unknown cipher suite "${suite}" is ignored`);
    } else if (seen.has(suite)) {
      sink.warn([...path, 'cipherSuites', i], `duplicate cipher suite "${suite}" is ignored`);
    }
    seen.add(suite);
  });

  if (mode === 'MESH_MUTUAL') {
    for (const field of CERTIFICATE_FIELDS) {
      if (tls[field] !== undefined) {
        sink.error([...path, field], "not allowed with mode MESH_MUTUAL: expected the gateway to use the mesh's workload certificate");
      }
    }
    return;
  }
  if (mode === 'PASSTHROUGH' || mode === 'AUTO_PASSTHROUGH') {
    if (tls.caCrl !== undefined || CERTIFICATE_FIELDS.some((field) => tls[field] !== undefined)) {
      sink.warn(path, `mode ${mode} does not terminate TLS; the certificate settings are ignored`);
    }
  }

  const sources = [
    tls.serverCertificate !== undefined && tls.privateKey !== undefined,
    tls.credentialName !== undefined,
    tls.credentialNames !== undefined,
    tls.tlsCertificates !== undefined,
  ].filter(Boolean).length;
  if (sources > 1) {
    sink.error(path, 'only one of credentialName, credentialNames, serverCertificate/privateKey or tlsCertificates may be set');
  }

  const terminates = mode === 'SIMPLE' || mode === 'MUTUAL' || mode === 'OPTIONAL_MUTUAL';
  if (terminates && (tls.credentialName !== undefined || tls.credentialNames !== undefined)) return;
  if (terminates) {
    if (mode !== 'SIMPLE' && (tls.caCertificates === undefined || tls.caCertificates === '')) {
      sink.error(
        [...path, 'caCertificates'],
        `required for mode ${mode} unless credentialName is set: expected the CA bundle that verifies client certificates`,
      );
    }
    const certificates: { at: Path; serverCertificate?: string | undefined; privateKey?: string | undefined }[] =
      tls.tlsCertificates !== undefined
        ? tls.tlsCertificates.map((certificate, i) => ({ at: [...path, 'tlsCertificates', i], ...certificate }))
        : [{ at: path, serverCertificate: tls.serverCertificate, privateKey: tls.privateKey }];
    for (const certificate of certificates) {
      if (certificate.serverCertificate === undefined || certificate.serverCertificate === '') {
        sink.error([...certificate.at, 'serverCertificate'], `required for mode ${mode} unless credentialName is set: expected the server certificate file`);
      }
      if (certificate.privateKey === undefined || certificate.privateKey === '') {
        sink.error([...certificate.at, 'privateKey'], `required for mode ${mode} unless credentialName is set: expected the server private key file`);
      }
    }
  }
  if (tls.caCrl !== undefined) {
    if (tls.credentialName !== undefined) {
      sink.error([...path, 'caCrl'], 'cannot be combined with credentialName: expected the CRL inside the credential');
    }
    if (mode === 'SIMPLE') sink.error([...path, 'caCrl'], 'not used with mode SIMPLE: expected mode MUTUAL or OPTIONAL_MUTUAL');
  }
}

function checkServer(sink: IssueSink, path: Path, server: GatewayServer): void {
  if (server.hosts.length === 0) {
    sink.error([...path, 'hosts'], 'expected at least one host such as "*.example.com" or "namespace/*.example.com"');
  }
  server.hosts.forEach((host, j) => {
    const problem = gatewayHostProblem(host);
    if (problem !== undefined) sink.error([...path, 'hosts', j], problem);
  });

  const { port } = server;
  const unixBind = server.bind?.startsWith(UNIX_PREFIX) ?? false;
  if (unixBind && port.number !== 0) {
    sink.error([...path, 'port', 'number'], `expected 0 for a unix:// bind, got ${port.number}`);
  } else if (!unixBind && port.number === 0) {
    sink.error([...path, 'port', 'number'], 'expected a port number from 1 to 65535 (0 only with a unix:// bind), got 0');
  }
  if (port.targetPort !== undefined && port.targetPort > 0) {
    sink.error([...path, 'port', 'targetPort'], 'targetPort has no effect on a gateway: expected it to be unset');
  }
  if (server.bind !== undefined && server.bind !== '') {
    let problem: string | undefined;
    if (unixBind) problem = unixSocketProblem(server.bind.slice(UNIX_PREFIX.length));
    else if (!isIpAddress(server.bind)) problem = `expected an IP address or a unix:// socket path, got "${server.bind}"`;
    if (problem !== undefined) sink.error([...path, 'bind'], problem);
  }

  const protocol = port.protocol.toUpperCase();
  const known = (GATEWAY_PROTOCOLS as readonly string[]).includes(protocol);
  if (!known) {
    sink.error([...path, 'port', 'protocol'], `unknown protocol "${port.protocol}": expected one of ${listWords(GATEWAY_PROTOCOLS)}`);
  }
  const tls = server.tls;
  if (tls !== undefined) checkServerTls(sink, [...path, 'tls'], tls);
  if (!known) return;

  if (TLS_PROTOCOLS.has(protocol) && tls === undefined) {
    sink.error([...path, 'tls'], `required for protocol ${protocol}: expected tls settings such as {mode: SIMPLE, credentialName: <secret>}`);
  } else if (!TLS_PROTOCOLS.has(protocol) && tls !== undefined) {
    if (HTTP_PROTOCOLS.has(protocol)) {
      const passthrough = tls.mode === undefined || tls.mode === 'PASSTHROUGH' || tls.mode === 'AUTO_PASSTHROUGH';
      if (!passthrough || tls.caCertificates !== undefined || tls.privateKey !== undefined || tls.serverCertificate !== undefined) {
        sink.error([...path, 'tls'], `TLS is not terminated on a plain-text ${protocol} server: expected only tls.httpsRedirect`);
      }
    } else {
      sink.error([...path, 'tls'], `expected no tls settings on a ${protocol} server: only HTTPS and TLS servers use them`);
    }
  }
  if (tls?.httpsRedirect === true && !HTTP_PROTOCOLS.has(protocol)) {
    sink.warn([...path, 'tls', 'httpsRedirect'], `httpsRedirect only applies to HTTP servers; it is ignored with protocol ${protocol}`);
  }
}

export function validateGateway(sink: IssueSink, resource: Gateway): void {
  const servers = resource.spec.servers ?? [];
  if (servers.length === 0) {
    sink.error(['spec', 'servers'], 'expected at least one server');
    return;
  }
  const portNames = new Map<string, number>();
  servers.forEach((server, i) => {
    const path = ['spec', 'servers', i];
    checkServer(sink, path, server);
    const first = portNames.get(server.port.name);
    if (first !== undefined) {
      sink.error([...path, 'port', 'name'], `duplicate port name "${server.port.name}" (also servers[${first}]): expected unique port names across servers`);
    } else {
      portNames.set(server.port.name, i);
    }
  });
}
