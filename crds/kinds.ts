export const SECURITY_GROUP = 'security.mesh.io';
export const NETWORKING_GROUP = 'networking.mesh.io';
export const SECURITY_VERSION = 'v1beta1';
export const NETWORKING_VERSION = 'v1alpha3';
export const SECURITY_API_VERSION = `${SECURITY_GROUP}/${SECURITY_VERSION}` as const;
export const NETWORKING_API_VERSION = `${NETWORKING_GROUP}/${NETWORKING_VERSION}` as const;

export type KindName =
  | 'PeerAuthentication'
  | 'RequestAuthentication'
  | 'AuthorizationPolicy'
  | 'DestinationRule'
  | 'Gateway'
  | 'VirtualService';

export type KindInfo = {
  readonly group: string;
  readonly version: string;
  readonly kind: KindName;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly namespaced: true;
};

const SECURITY_CATEGORIES = ['mesh-io', 'security-mesh-io'] as const;
const NETWORKING_CATEGORIES = ['mesh-io', 'networking-mesh-io'] as const;

/** The policy kinds users apply, with the names the CRD manifests and `kubectl` use. */
export const KINDS: { readonly [K in KindName]: KindInfo & { readonly kind: K } } = {
  PeerAuthentication: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    kind: 'PeerAuthentication',
    plural: 'peerauthentications',
    singular: 'peerauthentication',
    shortNames: ['pa'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  RequestAuthentication: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    kind: 'RequestAuthentication',
    plural: 'requestauthentications',
    singular: 'requestauthentication',
    shortNames: ['ra'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  AuthorizationPolicy: {
    group: SECURITY_GROUP,
    version: SECURITY_VERSION,
    kind: 'AuthorizationPolicy',
    plural: 'authorizationpolicies',
    singular: 'authorizationpolicy',
    shortNames: ['ap'],
    categories: SECURITY_CATEGORIES,
    namespaced: true,
  },
  DestinationRule: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    kind: 'DestinationRule',
    plural: 'destinationrules',
    singular: 'destinationrule',
    shortNames: ['dr'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  Gateway: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    kind: 'Gateway',
    plural: 'gateways',
    singular: 'gateway',
    shortNames: ['gw'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
  VirtualService: {
    group: NETWORKING_GROUP,
    version: NETWORKING_VERSION,
    kind: 'VirtualService',
    plural: 'virtualservices',
    singular: 'virtualservice',
    shortNames: ['vs'],
    categories: NETWORKING_CATEGORIES,
    namespaced: true,
  },
};

export const KIND_NAMES: readonly KindName[] = Object.keys(KINDS) as KindName[];

/** `group/version` of a kind, as written in `apiVersion`. */
export function apiVersionOf(kind: KindName): string {
  const info = KINDS[kind];
  return `${info.group}/${info.version}`;
}
