import type { Logger } from '../../runtime/index.js';
import type { CustomProblem } from './ext-authz-builder.js';

/**
 * Logs each CUSTOM policy whose provider cannot be used, once per distinct problem (pushes build
 * the same filters again and again): the rules it names are denied until the provider is fixed.
 */
export function newCustomProblemReporter(log: Logger): (problem: CustomProblem) => void {
  const logged = new Map<string, string>();
  return ({ policy, provider, problem }) => {
    const key = `${policy}\n${provider}`;
    if (logged.get(key) === problem) return;
    logged.set(key, problem);
    log.error({ policy, provider, problem }, `failed to process CUSTOM action of ${policy}: its rules are denied`);
  };
}
