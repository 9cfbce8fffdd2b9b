/**
 * A loopback Kubernetes API server double that speaks the real protocol: paths and discovery,
 * list/watch with resource versions, bookmarks and 410 Gone, patches, server-side apply, CRDs,
 * TokenReview, mutating and validating admission webhooks, and the pod subresources log, proxy and
 * portforward (WebSocket) to loopback stand-ins for pods. Built and shipped: the local
 * mesh's Kubernetes mode runs on it, and tests drive it with the real kubectl, helm and
 * client-node. Product packages never import it.
 */
export type {
  AccessDenial,
  ApiRequestRecord,
  ApiRequestRecorder,
  ApiServerDouble,
  ApiServerDoubleOptions,
  FaultControls,
  IssueTokenOptions,
  PodAddress,
  PodLogLine,
  PodLogSource,
  PodResolver,
  WebhookServiceResolver,
} from './api-server-double.js';
export { startApiServerDouble } from './api-server-double.js';
