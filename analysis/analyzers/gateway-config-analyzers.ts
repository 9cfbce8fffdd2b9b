import type { Gateway, GatewayServer } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { hostsOverlap } from './hosts.js';
import { labelsMatch } from '../../names/index.js';
import { selectorString } from './kube-objects.js';

/** The certificates a TLS server presents: its credential names or its certificate files. */
function certificatesOf(server: GatewayServer): string[] {
  const tls = server.tls;
  if (tls === undefined || tls.mode === 'PASSTHROUGH' || tls.mode === 'AUTO_PASSTHROUGH' || tls.mode === 'MESH_MUTUAL') return [];
  const out = [tls.credentialName, ...(tls.credentialNames ?? [])]
    .filter((name): name is string => name !== undefined && name !== '')
    .map((name) => `credential:${name}`);
  if (tls.serverCertificate !== undefined && tls.serverCertificate !== '') out.push(`files:${tls.serverCertificate}:${tls.privateKey ?? ''}`);
  for (const certificate of tls.tlsCertificates ?? []) out.push(`files:${certificate.serverCertificate ?? ''}:${certificate.privateKey ?? ''}`);
  return out;
}

/** Whether two gateways run on the same workload as far as their selectors tell: one selector contains the other. */
function sameWorkload(a: Resource<Gateway>, b: Resource<Gateway>): boolean {
  const sa = a.object.spec.selector ?? {};
  const sb = b.object.spec.selector ?? {};
  return labelsMatch(sa, sb) || labelsMatch(sb, sa);
}

const fullName = (gateway: Resource<Gateway>): string => `${gateway.namespace}/${gateway.name}`;

/** MSH0138: two Gateways on the same workload presenting the same certificate (HTTP/2 connection reuse then answers 404). */
export const certificateAnalyzer: Analyzer = {
  name: 'gateway.CertificateAnalyzer',
  description: 'Checks a gateway certificate is not used by another gateway on the same workload',
  inputs: ['Gateway'],
  analyze(context) {
    const gateways = context.read('Gateway');
    for (const gateway of gateways) {
      const mine = new Set((gateway.object.spec.servers ?? []).flatMap(certificatesOf));
      const sharing = gateways.filter(
        (other) => other !== gateway && sameWorkload(gateway, other) && (other.object.spec.servers ?? []).flatMap(certificatesOf).some((c) => mine.has(c)),
      );
      if (sharing.length === 0) continue;
      const names = [gateway, ...sharing].map(fullName).sort();
      context.report(
        'GatewayDuplicateCertificate',
        gateway,
        `Duplicate certificate in multiple gateways [${names.join(' ')}] may cause 404s if clients re-use HTTP2 connections.`,
      );
    }
  },
};

/** MSH0145: two Gateways with the same selector serving the same port with overlapping hosts. */
export const conflictingGatewayAnalyzer: Analyzer = {
  name: 'gateway.ConflictingGatewayAnalyzer',
  description: 'Checks a gateway does not share its selector, port and a host with another gateway',
  inputs: ['Gateway'],
  analyze(context) {
    const gateways = context.read('Gateway');
    const hostOf = (host: string): string => host.slice(host.indexOf('/') + 1);
    for (const gateway of gateways) {
      const selector = selectorString(gateway.object.spec.selector ?? {});
      for (const server of gateway.object.spec.servers ?? []) {
        for (const other of gateways) {
          if (other === gateway || selectorString(other.object.spec.selector ?? {}) !== selector) continue;
          const clashing = (other.object.spec.servers ?? [])
            .filter((s) => s.port.number === server.port.number)
            .flatMap((s) => s.hosts.filter((host) => server.hosts.some((mine) => hostsOverlap(hostOf(mine), hostOf(host)))));
          if (clashing.length === 0) continue;
          const message = `Conflict with gateways ${fullName(other)} (workload selector ${selector}, port ${server.port.number}, hosts ${[...new Set(clashing)].join(',')}).`;
          context.report('ConflictingGateways', gateway, message);
        }
      }
    }
  },
};
