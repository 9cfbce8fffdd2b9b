import type { Settings } from '../runtime/index.js';

/** The settings the admission webhooks read, narrowed from the daemon's registry. */
export interface WebhookSettings {
  /** INJECT_ENABLED: false serves no `/inject`. */
  readonly injectEnabled: boolean;
  /** INJECTION_WEBHOOK_CONFIG_NAME: '' leaves the mutating webhook configurations alone. */
  readonly injectionWebhookConfigName: string;
  /** ENABLE_LEGACY_FSGROUP_INJECTION: injected pods get `fsGroup: 1337`. */
  readonly legacyFsGroup: boolean;
  /** REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION: the agent sends application probes to localhost. */
  readonly rewriteProbeLegacyLocalhost: boolean;
  /** REVISION: '' is the default revision. */
  readonly revision: string;
}

export function webhookSettingsFromSettings(settings: Settings<'pilot-discovery'>): WebhookSettings {
  return {
    injectEnabled: settings.get('INJECT_ENABLED'),
    injectionWebhookConfigName: settings.get('INJECTION_WEBHOOK_CONFIG_NAME'),
    legacyFsGroup: settings.get('ENABLE_LEGACY_FSGROUP_INJECTION'),
    rewriteProbeLegacyLocalhost: settings.get('REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION'),
    revision: settings.get('REVISION'),
  };
}
