import { z } from 'zod';
import { DAEMON_NAME } from '../names/index.js';

/** A DNS-1123 label: a revision, a service account or a namespace name. */
const dnsLabel = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/)
  .max(63);

/**
 * The values of the `base` chart (`deploy/charts/base`): the cluster-wide pieces every revision of
 * the daemon shares: the CRDs, the daemon's ClusterRole and its binding, and the default
 * revision's ValidatingWebhookConfiguration. The one source of the chart's `values.schema.json`
 * (strict: unknown keys are refused) and of the defaults its `values.yaml` must parse to.
 */
export const baseValuesSchema = z.strictObject({
  global: z
    .strictObject({
      /** Render meshd-default-validator: the validating webhook of objects without a revision label, when no meshd release of the default revision renders its own. */
      configValidation: z
        .boolean()
        .default(true)
        .describe("Render the default revision's ValidatingWebhookConfiguration meshd-default-validator (the meshd chart names its own per revision)."),
    })
    .default({ configValidation: true }),
  /** The `mesh.io/rev` label of the objects this release installs; empty means `default`. */
  revision: z
    .union([z.literal(''), dnsLabel])
    .default('')
    .describe('The mesh.io/rev label of every object of the release; empty means "default".'),
  /**
   * The revision whose daemon serves the default validation webhook (service `meshd` for
   * `default`, else `meshd-<revision>`); empty renders no default webhook.
   */
  defaultRevision: z
    .union([z.literal(''), dnsLabel])
    .default('')
    .describe(
      'The revision whose daemon serves meshd-default-validator; empty (the default) renders none: the meshd chart of the default revision validates those objects itself.',
    ),
  /** The daemon's service accounts in the release namespace bound to the ClusterRole (one per revision). */
  serviceAccounts: z
    .array(dnsLabel)
    .min(1)
    .default([DAEMON_NAME])
    .describe('The service accounts of the daemon (meshd, meshd-<revision>) bound to the ClusterRole.'),
  /** The CRDs as templates (upgraded by `helm upgrade`), and the ones left out. */
  base: z
    .strictObject({
      enableCRDTemplates: z
        .boolean()
        .default(true)
        .describe("Give the CRDs the release's labels (they are templates either way, so helm upgrade upgrades them); false keeps the files' own labels."),
      excludedCRDs: z.array(z.string().min(1)).default([]).describe('CRDs left out of the release, by name (e.g. gateways.networking.mesh.io).'),
    })
    .default({ enableCRDTemplates: true, excludedCRDs: [] }),
  /** The installer's owning resource, written to `install.operator.mesh.io/owning-resource`. */
  ownerName: z.string().default('').describe('The owning resource recorded in install.operator.mesh.io/owning-resource; empty means "unknown".'),
});

export type BaseValues = z.infer<typeof baseValuesSchema>;
