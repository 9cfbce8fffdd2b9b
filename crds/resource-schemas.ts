import type { z } from 'zod';
import type { KindName } from './kinds.js';
import { authorizationPolicySchema, authorizationPolicySpecSchema } from './authorization-policy-schema.js';
import { destinationRuleSchema, destinationRuleSpecSchema } from './destination-rule-schema.js';
import { gatewaySchema, gatewaySpecSchema } from './gateway-schema.js';
import { peerAuthenticationSchema, peerAuthenticationSpecSchema } from './peer-authentication-schema.js';
import { requestAuthenticationSchema, requestAuthenticationSpecSchema } from './request-authentication-schema.js';
import { serviceEntrySchema, serviceEntrySpecSchema } from './service-entry-schema.js';
import { virtualServiceSchema, virtualServiceSpecSchema } from './virtual-service-schema.js';
import { workloadEntrySchema, workloadEntrySpecSchema } from './workload-entry-schema.js';
import { workloadGroupSchema, workloadGroupSpecSchema } from './workload-group-schema.js';

/** The whole-object schema of each kind (apiVersion, kind, metadata, spec, status). */
export const RESOURCE_SCHEMAS = {
  PeerAuthentication: peerAuthenticationSchema,
  RequestAuthentication: requestAuthenticationSchema,
  AuthorizationPolicy: authorizationPolicySchema,
  DestinationRule: destinationRuleSchema,
  Gateway: gatewaySchema,
  VirtualService: virtualServiceSchema,
  ServiceEntry: serviceEntrySchema,
  WorkloadEntry: workloadEntrySchema,
  WorkloadGroup: workloadGroupSchema,
} as const satisfies { [K in KindName]: z.ZodType };

/** The spec schema of each kind: what a CRD manifest's `openAPIV3Schema.properties.spec` is built from. */
export const SPEC_SCHEMAS = {
  PeerAuthentication: peerAuthenticationSpecSchema,
  RequestAuthentication: requestAuthenticationSpecSchema,
  AuthorizationPolicy: authorizationPolicySpecSchema,
  DestinationRule: destinationRuleSpecSchema,
  Gateway: gatewaySpecSchema,
  VirtualService: virtualServiceSpecSchema,
  ServiceEntry: serviceEntrySpecSchema,
  WorkloadEntry: workloadEntrySpecSchema,
  WorkloadGroup: workloadGroupSpecSchema,
} as const satisfies { [K in KindName]: z.ZodType };

export type ResourceOf<K extends KindName> = z.infer<(typeof RESOURCE_SCHEMAS)[K]>;

/** Any validated policy resource; `kind` tells which. */
export type TypedResource = { [K in KindName]: ResourceOf<K> }[KindName];
