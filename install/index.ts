// The installation's typed side: each Helm chart's values as a zod schema (the one source of its
// `values.schema.json`), shared by the charts' tests and the coming `meshctl install` family.
export { chartValuesJsonSchema } from './chart-values-schema.js';
export { baseValuesSchema, type BaseValues } from './base-values.js';
export { globalValuesSchema, meshdValuesSchema, type MeshdValues } from './meshd-values.js';
export { gatewayValuesSchema, type GatewayValues } from './gateway-values.js';
