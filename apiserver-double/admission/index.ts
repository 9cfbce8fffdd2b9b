/** The admission chain: mutating then validating webhooks on creates and updates. */
export { AdmissionChain, AdmissionRejection } from './admission-chain.js';
export type { AdmissionSources } from './admission-chain.js';
export { admittedWrite } from './admitted-write.js';
export type { AdmittedWriteRequest, AdmittedWriteResult } from './admitted-write.js';
export type { WebhookServiceResolver } from './webhook-caller.js';
export { warningHeaderValue } from './warning-header.js';
