import type { GatewayValues } from './gateway-values.js';
import type { MeshOperatorSpec } from './mesh-operator.js';
import type { MeshdValues } from './meshd-values.js';
import { DAEMON_NAME, revisionedName } from '../names/index.js';

/** The install components, in the order they are applied (the reference's names). */
export const COMPONENTS = ['Base', 'Pilot', 'IngressGateways', 'EgressGateways'] as const;
export type ComponentName = (typeof COMPONENTS)[number];

/** One chart release an installation is made of. */
export interface ChartRelease {
  readonly component: ComponentName;
  /** The chart folder under `<manifests>/charts`. */
  readonly chart: 'base' | 'meshd' | 'gateway';
  /** The release name (and a gateway's name). */
  readonly release: string;
  readonly namespace: string;
  readonly values: Record<string, unknown>;
}

/**
 * The chart releases of an installation, with the values each chart gets: the spec's `hub`/`tag`
 * and `revision` fill the charts' own, `meshConfig` goes to meshd, each enabled gateway is a
 * release of the gateway chart.
 */
export function chartReleasesOf(spec: MeshOperatorSpec, ownerName: string): ChartRelease[] {
  const namespace = spec.namespace ?? 'mesh-system';
  const revision = spec.revision ?? '';
  const values = spec.values ?? {};
  const releases: ChartRelease[] = [];
  if (spec.components?.base?.enabled !== false) {
    releases.push({
      component: 'Base',
      chart: 'base',
      release: 'base',
      namespace,
      values: {
        ownerName,
        ...(revision ? { revision, serviceAccounts: [DAEMON_NAME, `${DAEMON_NAME}-${revision}`] } : {}),
        global: { configValidation: values.global?.configValidation ?? true },
      },
    });
  }
  if (spec.components?.pilot?.enabled !== false) {
    const meshd: MeshdValues = {
      revision,
      ownerName,
      ...(values.revisionTags ? { revisionTags: values.revisionTags } : {}),
      ...(values.pilot ? { pilot: values.pilot } : {}),
      ...(spec.meshConfig ? { meshConfig: spec.meshConfig } : {}),
      ...(values.sidecarInjectorWebhook ? { sidecarInjectorWebhook: values.sidecarInjectorWebhook } : {}),
      ...(values.meshdRemote ? { meshdRemote: values.meshdRemote } : {}),
      ...(values.mesh_cni ? { mesh_cni: values.mesh_cni } : {}),
      global: { ...values.global, ...(spec.hub !== undefined ? { hub: spec.hub } : {}), ...(spec.tag !== undefined ? { tag: spec.tag } : {}) },
    };
    releases.push({ component: 'Pilot', chart: 'meshd', release: revision ? `${DAEMON_NAME}-${revision}` : DAEMON_NAME, namespace, values: meshd });
  }
  const gateways = (component: 'IngressGateways' | 'EgressGateways', label: string): void => {
    for (const gateway of (component === 'IngressGateways' ? spec.components?.ingressGateways : spec.components?.egressGateways) ?? []) {
      if (gateway.enabled === false) continue;
      const gatewayValues: GatewayValues = {
        labels: { mesh: label },
        ...gateway.values,
        name: gateway.name,
        ownerName,
        component,
        ...(revision ? { revision } : {}),
      };
      releases.push({ component, chart: 'gateway', release: gateway.name, namespace, values: gatewayValues });
    }
  };
  gateways('IngressGateways', 'ingressgateway');
  gateways('EgressGateways', 'egressgateway');
  return releases;
}

/** The record (and owner label) of an installation of `revision`: `installed-state[-<revision>]`. */
export function installedStateName(revision: string | undefined): string {
  return revisionedName('installed-state', revision);
}
