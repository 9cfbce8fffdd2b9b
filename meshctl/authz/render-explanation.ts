import { parsePolicyKey } from '../describe/authz-check.js';
import type { ExplainRequest, Explanation, RbacStep } from './explain.js';

/** `ns[<ns>]-policy[<name>]-rule[<i>]` → `AuthorizationPolicy <name>.<ns>, rule <i>` (and what a CUSTOM key says of its provider). */
export function describePolicyKey(key: string): string {
  const { policy, rule, provider, badProvider } = parsePolicyKey(key);
  if (policy === key) return key;
  const custom = badProvider ? ` (CUSTOM: provider ${provider ?? ''} cannot be used, its rules are denied)` : '';
  return `AuthorizationPolicy ${policy}, rule ${rule}${custom}`;
}

function customLine(step: RbacStep): string {
  const policies = step.policies.map(describePolicyKey).join('; ');
  const dryRun = step.dryRun
    ? ` [dry-run: would be sent to provider ${parsePolicyKey(step.dryRun.matchedPolicy ?? '').provider ?? ''} by ${describePolicyKey(step.dryRun.matchedPolicy ?? '')}]`
    : '';
  let result: string;
  if (step.result === 'not reached') result = 'not reached';
  else if (step.externalAuthorizer) {
    const { provider, cluster } = step.externalAuthorizer;
    result = `matched ${describePolicyKey(step.matchedPolicy ?? '')} → sent to the external authorizer of provider ${provider}${cluster ? ` (${cluster})` : ''}: its answer decides`;
  } else result = `no CUSTOM rule matched → the external authorizer is not asked${dryRun}`;
  return `  CUSTOM ${result}\n           policies: ${policies}\n`;
}

function rbacLine(step: RbacStep): string {
  if (step.action === 'CUSTOM') return customLine(step);
  const policies = step.policies.length === 0 ? '(no policies)' : step.policies.map(describePolicyKey).join('; ');
  const result =
    step.result === 'not reached'
      ? 'not reached'
      : step.result === 'matched'
        ? `matched ${describePolicyKey(step.matchedPolicy ?? '')} → ${step.allowed ? 'allowed' : 'denied'}`
        : `no policy matched → ${step.allowed ? 'allowed' : 'denied'}`;
  const dryRun = step.dryRun
    ? ` [dry-run: would be ${step.dryRun.allowed ? 'allowed' : 'denied'}${step.dryRun.matchedPolicy ? ` by ${describePolicyKey(step.dryRun.matchedPolicy)}` : ''}]`
    : '';
  return `  ${step.action.padEnd(6)} ${result}${dryRun}\n           policies: ${policies}\n`;
}

/** The decision chain, one stage per line, ending with the answer. */
export function renderExplanation(request: ExplainRequest, explanation: Explanation): string {
  const source = request.source.kind === 'plaintext' ? 'plain text' : `mutual TLS as ${request.source.principal}`;
  const lines = [
    `Request:      ${request.method.toUpperCase()} ${request.path} (host ${request.host}) to ${request.address}:${request.port}, ${source}\n`,
    `Listener:     ${explanation.listener ?? '(none)'}\n`,
    `Connection:   ${explanation.connection}\n`,
    ...(explanation.mtlsMode ? [`mTLS mode:    ${explanation.mtlsMode} on port ${request.port}\n`] : []),
    ...(explanation.jwt !== undefined ? [`JWT:          ${explanation.jwt}\n`] : []),
    ...(explanation.answer.by === 'listener' || explanation.answer.outcome === 'reset'
      ? []
      : [`RBAC:${explanation.rbac.length === 0 ? '         no RBAC filter (no AuthorizationPolicy applies)' : ''}\n`, ...explanation.rbac.map(rbacLine)]),
    ...(explanation.route ? [`Route:        ${explanation.route}\n`] : []),
    ...(explanation.upstream ? [`Upstream:     ${explanation.upstream}\n`] : []),
    `Answer:       ${answerText(explanation.answer)}\n`,
  ];
  return lines.join('');
}

function answerText(answer: Explanation['answer']): string {
  const external = answer.ifAllowedBy?.length
    ? `, if the external authorizer of ${answer.ifAllowedBy.map((provider) => `provider ${provider}`).join(' and ')} allows it (explain cannot know its answer; a denial answers instead)`
    : '';
  if (answer.outcome === 'reset') return `connection reset (by the ${answer.by})`;
  if (answer.outcome === 'forwarded') return `forwarded to the application (its status is the answer)${external}`;
  const by = answer.by.startsWith('rbac ') ? `denied by ${describePolicyKey(answer.by.slice(5))}` : `by the ${answer.by}`;
  return `${`${answer.status ?? ''} ${answer.body ?? ''} (${by})`.replace(/ +/g, ' ')}${external}`;
}
