/**
 * A loopback Kubernetes API server double that speaks the real protocol: paths and discovery,
 * list/watch with resource versions, bookmarks and 410 Gone, patches, server-side apply, CRDs,
 * TokenReview, and mutating and validating admission webhooks. Built and shipped: the local
 * mesh's Kubernetes mode runs on it, and tests drive it with the real kubectl, helm and
 * client-node. Product packages never import it.
 */
export type { AccessDenial, ApiRequestRecord, ApiRequestRecorder, ApiServerDouble, ApiServerDoubleOptions, FaultControls, IssueTokenOptions, WebhookServiceResolver } from './api-server-double.js';
export { startApiServerDouble } from './api-server-double.js';
