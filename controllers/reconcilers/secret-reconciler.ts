import type { RegistryReconcilerOptions } from './namespace-reconciler.js';
import { parseSecretCredential } from './secret-credential.js';
import type { Reconciler } from '../../runtime/index.js';

/**
 * Secrets into the model's credentials (gateways' `credentialName`). A secret that is not usable
 * (a key or certificate missing, a PEM that does not parse, a key that is not the certificate's)
 * is logged by name and field and not taken: the last good version keeps serving. A change is a
 * full push naming the Secret, which only the Secret generator answers.
 */
export function newSecretReconciler(options: RegistryReconcilerOptions): Reconciler {
  const { source, model, push, clock } = options;
  return async ({ key, log }) => {
    const startedAt = clock.now();
    const object = source.store.get(key);
    const fields = { namespace: key.namespace, name: key.name };
    let changed: boolean;
    if (!object) {
      changed = model.credentials.delete(key.namespace, key.name);
    } else {
      const result = parseSecretCredential(object as Parameters<typeof parseSecretCredential>[0]);
      if (result.kind === 'invalid') {
        const kept = model.credentials.get(key.namespace, key.name) !== undefined;
        log.warn({ ...fields, field: result.field, problem: `${result.field} ${result.message}`, keptLastGood: kept }, 'secret is not a usable TLS credential');
        return;
      }
      if (result.kind === 'not-tls') {
        changed = model.credentials.delete(key.namespace, key.name);
      } else {
        changed = model.credentials.apply(result.credential);
      }
    }
    if (!changed) return;
    push.push({ full: true, reason: 'config', configsUpdated: [{ kind: 'Secret', namespace: key.namespace, name: key.name }], startedAt });
    log.debug(fields, 'credential updated');
  };
}
