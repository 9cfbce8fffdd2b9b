// The admission webhooks (`:15017`): the HTTPS admission server with resource validation
// (`/validate`) and sidecar injection (`/inject`), and the controller that keeps the webhook
// configurations' `caBundle` and failure policy. Registered on the daemon's manager by
// `setupWebhookWithManager`. The injection core (templates, the injected pod) is the
// sub-package `webhook/inject/`, which `meshctl` also uses.
export { setupWebhookWithManager, type WebhookServing, type WebhookSetupOptions, type Webhooks } from './setup.js';
export { servingIdentityOf, caBundleSourceOf, type ServingIdentity, type CaBundleSource, type ServingKeyCertificate } from './serving-identity.js';
export { newAdmissionServer, type AdmissionServer, type AdmissionServerOptions } from './admission-server.js';
export { MAX_ADMISSION_BODY_BYTES, type AdmissionRoute, type ReviewHandler } from './admission-http.js';
export { ADMISSION_V1, ADMISSION_V1BETA1, type AdmissionRequest, type AdmissionResponse, type AdmissionReviewVersion } from './admission-review.js';
export { newValidationRoute, validateRequest, type ValidationFailure } from './validation-webhook.js';
export { addWebhookConfigPatcher, INJECTOR_WEBHOOK_SUFFIX, type WebhookConfigPatcherOptions } from './webhook-config-patcher.js';
export { webhookSettingsFromSettings, type WebhookSettings } from './webhook-settings.js';
