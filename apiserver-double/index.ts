/**
 * A loopback Kubernetes API server double for tests: real paths, discovery, list/watch with
 * resource versions, bookmarks and 410 Gone, patches, server-side apply, CRDs and TokenReview.
 */
export type { ApiServerDouble, ApiServerDoubleOptions, FaultControls, IssueTokenOptions } from './api-server-double.js';
export { startApiServerDouble } from './api-server-double.js';
