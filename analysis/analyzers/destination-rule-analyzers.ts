import type { ClientTlsSettings } from '../../crds/index.js';
import { labelsMatch } from '../../names/index.js';
import type { Analyzer } from '../analyzer.js';
import { fullHostName, servicesByHost } from './hosts.js';
import { labelsOf } from './kube-objects.js';

/** A TLS origination that checks nothing: SIMPLE or MUTUAL without caCertificates (a credentialName counts only with a workloadSelector). */
function unverifiedMode(tls: ClientTlsSettings | undefined, selected: boolean): string | undefined {
  const mode = tls?.mode;
  if (mode !== 'SIMPLE' && mode !== 'MUTUAL') return undefined;
  if ((tls?.caCertificates ?? '') !== '') return undefined;
  if ((tls?.credentialName ?? '') !== '' && selected) return undefined;
  return mode;
}

/**
 * MSH0128 (destination level) and MSH0129 (per port): a DestinationRule originating TLS (SIMPLE or
 * MUTUAL) without caCertificates, so the server's certificate is not verified. As in the reference,
 * a credentialName stands in for caCertificates only when the rule has a workloadSelector; subsets
 * are not checked. The port is printed as the reference prints its port selector (`number:443`).
 */
export const caCertificateAnalyzer: Analyzer = {
  name: 'destinationrule.CaCertificateAnalyzer',
  description: 'Checks if caCertificates is set when TLS mode is SIMPLE/MUTUAL',
  inputs: ['DestinationRule'],
  analyze(context) {
    for (const resource of context.read('DestinationRule')) {
      const spec = resource.object.spec;
      const selected = spec.workloadSelector !== undefined;
      const prefix = `DestinationRule ${resource.namespace}/${resource.name} in namespace ${resource.namespace} has TLS mode set to`;
      const mode = unverifiedMode(spec.trafficPolicy?.tls, selected);
      if (mode !== undefined) {
        const message = `${prefix} ${mode} but no caCertificates are set to validate server identity for host: ${spec.host}`;
        context.report('NoServerCertificateVerificationDestinationLevel', resource, message);
      }
      for (const settings of spec.trafficPolicy?.portLevelSettings ?? []) {
        const portMode = unverifiedMode(settings.tls, selected);
        if (portMode === undefined) continue;
        const port = settings.port === undefined ? '' : `number:${settings.port.number}`;
        const message = `${prefix} ${portMode} but no caCertificates are set to validate server identity for host: ${spec.host} at port ${port}`;
        context.report('NoServerCertificateVerificationPortLevel', resource, message);
      }
    }
  },
};

/**
 * MSH0174: a DestinationRule whose host is no Service of the snapshot (a short host names a
 * Service of the rule's namespace; wildcard hosts never match a Service, as in the reference,
 * whose only wildcard hosts are ServiceEntries'). MSH0173: a subset whose labels no pod of the
 * snapshot carries. As in the reference, a Service's pods are not the only candidates: a Service
 * has no workload selector of its own to add, so any pod with the subset's labels counts, its
 * node name added as `kubernetes.io/hostname` as the registry adds it (no Node input: no
 * topology labels).
 */
export const subsetSelectPodAnalyzer: Analyzer = {
  name: 'destinationrule.SubsetSelectPodAnalyzer',
  description: 'Checks if pods are selected by subsets in destination rules.',
  inputs: ['DestinationRule', 'Pod', 'Service'],
  analyze(context) {
    const services = servicesByHost(context.read('Service'), context.domainSuffix);
    const podLabels = context.read('Pod').map((pod) => {
      const node = pod.object.spec?.nodeName;
      return { ...labelsOf(pod.object), ...(node !== undefined && node !== '' ? { 'kubernetes.io/hostname': node } : {}) };
    });
    for (const resource of context.read('DestinationRule')) {
      const spec = resource.object.spec;
      if (!services.has(fullHostName(spec.host, resource.namespace, context.domainSuffix))) {
        context.report('UnknownDestinationRuleHost', resource, `The host ${spec.host} defined in the DestinationRule does not match any services in the mesh.`);
        continue;
      }
      for (const subset of spec.subsets ?? []) {
        if (podLabels.some((labels) => labelsMatch(subset.labels ?? {}, labels))) continue;
        const message = `The Subset ${subset.name} defined in the DestinationRule does not select any pods. Which may lead to 503 UH (NoHealthyUpstream).`;
        context.report('DestinationRuleSubsetNotSelectPods', resource, message);
      }
    }
  },
};
