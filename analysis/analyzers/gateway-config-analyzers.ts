import type { Gateway, GatewayServer } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { labelsMatch } from '../../names/index.js';
import { labelsOf, selectorString } from './kube-objects.js';

type ServerTls = NonNullable<GatewayServer['tls']>;

/** The reference's rule: the same `credentialName`, or (both without one) the same certificate and key files. */
function sameCertificate(a: ServerTls, b: ServerTls): boolean {
  const [ca, cb] = [a.credentialName ?? '', b.credentialName ?? ''];
  if (ca !== '' && cb !== '') return ca === cb;
  if (ca !== '' || cb !== '') return false;
  const [sa, sb] = [a.serverCertificate ?? '', b.serverCertificate ?? ''];
  if (sa === '' || sa !== sb) return false;
  const [ka, kb] = [a.privateKey ?? '', b.privateKey ?? ''];
  return ka !== '' && ka === kb;
}

const fullName = (gateway: Resource<Gateway>): string => `${gateway.namespace}/${gateway.name}`;
const selectorOf = (gateway: Resource<Gateway>): Record<string, string> => gateway.object.spec.selector ?? {};

/**
 * MSH0138: a Gateway sharing a certificate with another Gateway whose selector holds all of its
 * own (an empty selector holding none): the other's pods also run this one's servers, and HTTP/2
 * connection reuse across their hosts then answers 404. Reported on the Gateway with the broader
 * selector only (on both when the selectors are equal), once per other Gateway, as the reference.
 */
export const certificateAnalyzer: Analyzer = {
  name: 'gateway.CertificateAnalyzer',
  description: 'Checks a gateway certificate is not used by another gateway on the same workload',
  inputs: ['Gateway'],
  analyze(context) {
    const gateways = context.read('Gateway');
    for (const gateway of gateways) {
      const tls = (gateway.object.spec.servers ?? []).flatMap((server) => (server.tls ? [server.tls] : []));
      for (const other of gateways) {
        if (other === gateway || !labelsMatch(selectorOf(gateway), selectorOf(other))) continue;
        const shared = (other.object.spec.servers ?? []).some(
          (server) => server.tls !== undefined && tls.some((mine) => sameCertificate(mine, server.tls as ServerTls)),
        );
        if (!shared) continue;
        const names = `[${fullName(gateway)} ${fullName(other)}]`;
        context.report(
          'GatewayDuplicateCertificate',
          gateway,
          `Duplicate certificate in multiple gateways ${names} may cause 404s if clients re-use HTTP2 connections.`,
        );
      }
    }
  },
};

/**
 * MSH0145: a Gateway server whose port and a host (with the same `bind`, as written) another
 * Gateway on the same workload also serves. Same workload, as the reference tells it: equal
 * selectors, or one selector holding the other's labels and some pod that both select. Each other
 * Gateway is read by the last of its servers on the port, as the reference reads it.
 */
export const conflictingGatewayAnalyzer: Analyzer = {
  name: 'gateway.ConflictingGatewayAnalyzer',
  description: 'Checks a gateway does not share its selector, port and a host with another gateway',
  inputs: ['Gateway', 'Pod'],
  analyze(context) {
    const gateways = context.read('Gateway');
    const pods = context.read('Pod');
    const sameWorkload = (a: Record<string, string>, b: Record<string, string>): boolean =>
      selectorString(a) === selectorString(b) ||
      ((labelsMatch(a, b) || labelsMatch(b, a)) && pods.some((pod) => labelsMatch(a, labelsOf(pod.object)) && labelsMatch(b, labelsOf(pod.object))));
    for (const gateway of gateways) {
      const selector = selectorOf(gateway);
      const others = gateways.filter((other) => other !== gateway && sameWorkload(selector, selectorOf(other)));
      for (const server of gateway.object.spec.servers ?? []) {
        const bind = server.bind ?? '';
        const conflicting = others.filter((other) => {
          const last = (other.object.spec.servers ?? []).filter((s) => s.port.number === server.port.number).at(-1);
          return last !== undefined && (last.bind ?? '') === bind && server.hosts.some((host) => last.hosts.includes(host));
        });
        if (conflicting.length === 0) continue;
        const names = conflicting.map(fullName).sort().join(',');
        const message = `Conflict with gateways ${names} (workload selector ${selectorString(selector)}, port ${server.port.number}, hosts ${server.hosts.join(',')}).`;
        context.report('ConflictingGateways', gateway, message);
      }
    }
  },
};
