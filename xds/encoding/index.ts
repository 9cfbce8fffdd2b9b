// Every cache of a push: the cross-push cache of encoded resources (PILOT_XDS_CACHE_SIZE), the
// per-push encodings of resources, lists, messages by content and route parts, the generators'
// per-push memo, and the response lists shared by content. The keying rule is in README.md.
export { contentText } from './content-text.js';
export { memoOf, PushMemoMap, type PushIdentity } from './push-scoped.js';
export { newResourceEncoder, type EncodedList, type ErrorReport, type ResourceEncoder, type ResourceEncoderOptions } from './resource-encoder.js';
export { SharedResponseList, type DeltaResourceMessage } from './shared-response-lists.js';
export { newXdsCache, type XdsCache, type XdsCacheMetrics } from './xds-cache.js';
