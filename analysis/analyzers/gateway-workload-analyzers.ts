import type { V1Pod } from '@kubernetes/client-node';
import type { Gateway } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import type { Resource } from '../snapshot.js';
import { labelsOf, podsMatching, selectorString, serviceSelects, targetPortOn } from './kube-objects.js';

/** The pods a Gateway's selector picks, in any namespace; none for a Gateway without selector. */
function gatewayPods(gateway: Resource<Gateway>, pods: readonly Resource<V1Pod>[]): Resource<V1Pod>[] {
  const selector = gateway.object.spec.selector ?? {};
  return Object.keys(selector).length === 0 ? [] : podsMatching(pods, undefined, selector);
}

/**
 * MSH0101: a Gateway selecting no pod. MSH0162: a server port (the port the gateway proxy listens
 * on) that is neither a port nor a target port of a Service selecting the gateway pods, whether the
 * pods declare it or not: as the reference, which retired the separate "not on the workload" code.
 */
export const ingressGatewayPortAnalyzer: Analyzer = {
  name: 'gateway.IngressGatewayPortAnalyzer',
  description: "Checks a gateway's ports against the gateway's Kubernetes service ports",
  inputs: ['Gateway', 'Pod', 'Service'],
  analyze(context) {
    const pods = context.read('Pod');
    const services = context.read('Service');
    for (const gateway of context.read('Gateway')) {
      const selector = gateway.object.spec.selector ?? {};
      if (Object.keys(selector).length === 0) continue;
      const matching = gatewayPods(gateway, pods);
      if (matching.length === 0) {
        context.report('ReferencedResourceNotFound', gateway, `Referenced selector not found: "${selectorString(selector)}"`);
        continue;
      }
      const servicePorts = new Set<number>();
      for (const pod of matching) {
        for (const service of services.filter((s) => serviceSelects(s, pod.namespace, labelsOf(pod.object)))) {
          for (const port of service.object.spec?.ports ?? []) {
            if ((port.protocol ?? 'TCP') !== 'TCP') continue;
            servicePorts.add(port.port);
            const target = targetPortOn(port, pod.object.spec);
            if (target !== undefined) servicePorts.add(target);
          }
        }
      }
      for (const number of new Set((gateway.object.spec.servers ?? []).map((server) => server.port.number))) {
        if (servicePorts.has(number)) continue;
        const message = `The gateway is listening on a target port (port ${number}) that is not defined in the Service associated with its workload instances (Pod selector ${selectorString(selector)}). If you need to access the gateway port through the gateway Service, it will not be available.`;
        context.report('GatewayPortNotDefinedOnService', gateway, message);
      }
    }
  },
};

/**
 * MSH0101: a TLS server's `credentialName` naming no Secret in the gateway workload's namespace
 * (where the gateway proxy reads it: the namespace of its pods, else the Gateway's own). MSH0161:
 * one naming a Secret there that is no usable credential (the snapshot's verdict on it).
 */
export const gatewaySecretAnalyzer: Analyzer = {
  name: 'gateway.SecretAnalyzer',
  description: 'Checks a gateway TLS credentialName names a Secret in the namespace of the gateway workload',
  inputs: ['Gateway', 'Pod', 'Secret'],
  analyze(context) {
    const secrets = new Map(context.read('Secret').map((secret) => [`${secret.namespace}/${secret.name}`, secret]));
    const pods = context.read('Pod');
    for (const gateway of context.read('Gateway')) {
      const podNamespaces = [...new Set(gatewayPods(gateway, pods).map((pod) => pod.namespace))];
      const namespaces = podNamespaces.length > 0 ? podNamespaces : [gateway.namespace];
      const names = (gateway.object.spec.servers ?? []).flatMap((server) => [server.tls?.credentialName, ...(server.tls?.credentialNames ?? [])]);
      for (const name of new Set(names)) {
        if (name === undefined || name === '' || name.includes('://')) continue;
        if (!namespaces.every((namespace) => secrets.has(`${namespace}/${name}`))) {
          context.report('ReferencedResourceNotFound', gateway, `Referenced credentialName not found: "${name}"`);
          continue;
        }
        for (const namespace of namespaces.filter((ns) => secrets.get(`${ns}/${name}`)?.credentialProblem !== undefined)) {
          const message = `The credential referenced by the Gateway ${gateway.name} in namespace ${namespace} is invalid, which can cause the traffic not to work as expected.`;
          context.report('InvalidGatewayCredential', gateway, message);
        }
      }
    }
  },
};
