import { stringify } from 'yaml';
import type { InjectorConfigText } from './injector-config.js';
import { GATEWAY_TEMPLATE } from './templates/gateway-template.js';
import { GRPC_AGENT_TEMPLATE } from './templates/grpc-agent-template.js';
import { SIDECAR_TEMPLATE } from './templates/sidecar-template.js';

/** The Helm values the built-in templates read, with the chart's defaults. */
const BUILTIN_VALUES = {
  global: {
    hub: 'docker.io/meshproject',
    tag: 'latest',
    caAddress: '',
    meshID: '',
    network: '',
    meshNamespace: 'mesh-system',
    multiCluster: { clusterName: '' },
    imagePullPolicy: '',
    imagePullSecrets: [],
    jwtPolicy: 'third-party-jwt',
    pilotCertProvider: 'meshd',
    logAsJson: false,
    logging: { level: 'default:info' },
    sds: { token: { aud: 'mesh-ca' } },
    sts: { servicePort: 0 },
    proxy: {
      image: 'proxyv2',
      autoInject: 'enabled',
      clusterDomain: 'cluster.local',
      logLevel: 'warning',
      componentLogLevel: 'misc:error',
      privileged: false,
      enableCoreDump: false,
      capNetBindService: false,
      holdApplicationUntilProxyStarts: false,
      includeIPRanges: '*',
      excludeIPRanges: '',
      includeInboundPorts: '*',
      excludeInboundPorts: '',
      includeOutboundPorts: '',
      excludeOutboundPorts: '',
      readinessInitialDelaySeconds: 1,
      readinessPeriodSeconds: 2,
      readinessFailureThreshold: 30,
      lifecycle: {},
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '2000m', memory: '1024Mi' } },
    },
    proxy_init: { image: 'proxyv2' },
  },
  mesh_cni: { enabled: false },
  revision: '',
  sidecarInjectorWebhook: { rewriteAppHTTPProbe: true, enableNamespacesByDefault: false, templates: {} },
};

/**
 * The injector's defaults, in the shape of the `mesh-sidecar-injector` ConfigMap: `config` (YAML:
 * policy, default templates, the `sidecar`, `gateway` and `grpc-agent` templates) and `values`
 * (JSON).
 */
export const BUILTIN_INJECTOR_CONFIG: InjectorConfigText = Object.freeze({
  config: stringify(
    {
      policy: 'enabled',
      defaultTemplates: ['sidecar'],
      alwaysInjectSelector: [],
      neverInjectSelector: [],
      injectedAnnotations: {},
      templates: { sidecar: SIDECAR_TEMPLATE, gateway: GATEWAY_TEMPLATE, 'grpc-agent': GRPC_AGENT_TEMPLATE },
    },
    { lineWidth: 0 },
  ),
  values: JSON.stringify(BUILTIN_VALUES, null, 2),
});
