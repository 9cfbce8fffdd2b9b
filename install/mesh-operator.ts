import { z } from 'zod';
import { meshConfigInputSchema } from '../crds/index.js';
import { gatewayValuesSchema } from './gateway-values.js';
import { globalValuesSchema, meshdValuesSchema } from './meshd-values.js';

export const MESH_OPERATOR_API_VERSION = 'install.mesh.io/v1alpha1';
export const MESH_OPERATOR_KIND = 'MeshOperator';

const dnsLabel = z.string().regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, 'a DNS label: lowercase letters, digits and -');
const gatewayComponent = z.strictObject({
  name: dnsLabel,
  enabled: z.boolean().optional(),
  /** The gateway chart's values for this gateway (its `name` and `revision` come from here and the spec). */
  values: gatewayValuesSchema.optional(),
});
const meshdValues = meshdValuesSchema.shape;

/**
 * What an installation is: a profile, overlays and settings, as `meshctl install` takes them and a
 * `MeshOperator` resource records them (the reference's IstioOperator, `installed-state`). Rendered
 * into the values of the base, meshd and gateway charts.
 */
export const meshOperatorSpecSchema = z.strictObject({
  profile: z.string().optional(),
  /** Where the components are installed. */
  namespace: dnsLabel.optional(),
  revision: dnsLabel.optional(),
  hub: z.string().optional(),
  tag: z.union([z.string(), z.number()]).optional(),
  meshConfig: z.optional(meshConfigInputSchema),
  components: z
    .strictObject({
      base: z.strictObject({ enabled: z.boolean().optional() }).optional(),
      pilot: z.strictObject({ enabled: z.boolean().optional() }).optional(),
      ingressGateways: z.array(gatewayComponent).optional(),
      egressGateways: z.array(gatewayComponent).optional(),
    })
    .optional(),
  values: z
    .strictObject({
      global: globalValuesSchema.optional(),
      pilot: meshdValues.pilot,
      sidecarInjectorWebhook: meshdValues.sidecarInjectorWebhook,
      meshdRemote: meshdValues.meshdRemote,
      mesh_cni: meshdValues.mesh_cni,
      revisionTags: meshdValues.revisionTags,
    })
    .optional(),
});

export type MeshOperatorSpec = z.infer<typeof meshOperatorSpecSchema>;

/** A `MeshOperator` document: the profile files and `-f` overlays are of this shape. */
export const meshOperatorSchema = z.strictObject({
  apiVersion: z.literal(MESH_OPERATOR_API_VERSION),
  kind: z.literal(MESH_OPERATOR_KIND),
  metadata: z
    .strictObject({
      name: z.string().optional(),
      namespace: z.string().optional(),
      labels: z.record(z.string(), z.string()).optional(),
      annotations: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
  spec: meshOperatorSpecSchema.optional(),
});

export type MeshOperator = z.infer<typeof meshOperatorSchema>;
