import type { ValidationIssue } from '../../crds/index.js';
import { stableJson } from '../stable-json.js';

/** What the config reconciler concluded about one version of a policy object. */
export interface ConfigOutcome {
  /** The version of the object this outcome is about. */
  readonly generation: number | undefined;
  readonly resourceVersion: string;
  readonly accepted: boolean;
  readonly errors: readonly ValidationIssue[];
  readonly warnings: readonly ValidationIssue[];
  /** The version the model serves for this key, if any (the last good one when this one is rejected). */
  readonly serving?: { readonly resourceVersion: string; readonly generation: number | undefined };
}

export interface StatusCondition {
  type: 'Accepted' | 'Reconciled';
  status: 'True' | 'False';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface ValidationMessage {
  level: 'Error' | 'Warning' | 'Info';
  /** The field at fault, for schema problems; empty for analysis messages. */
  path: string;
  /** The analysis message type, for analysis messages. */
  type?: { code: string; name: string };
  message: string;
}

/** The fields of `status` the daemon owns; `null` removes a field (JSON merge patch). */
export interface ConfigStatusPatch {
  conditions?: StatusCondition[];
  validationMessages?: ValidationMessage[] | null;
  observedGeneration?: number;
}

export interface ConfigStatusOptions {
  /** `PILOT_ENABLE_STATUS`: write the Accepted and Reconciled conditions. */
  conditions: boolean;
  /** `PILOT_ENABLE_ANALYSIS`: write the validation errors and warnings as messages. */
  analysis: boolean;
}

/** At most this many issues are spelled out in a condition message. */
const MAX_ISSUES_IN_MESSAGE = 10;

/**
 * The status an object should carry for `outcome`, as a merge patch of `status`, or undefined when
 * `current` (the object's status now) already says it. A condition keeps its
 * `lastTransitionTime` while its `status` stays the same, as Kubernetes conditions do.
 */
export function buildConfigStatus(
  outcome: ConfigOutcome,
  current: unknown,
  now: string,
  options: ConfigStatusOptions,
  analysisMessages: readonly ValidationMessage[] = [],
): ConfigStatusPatch | undefined {
  const existing = typeof current === 'object' && current !== null ? (current as Record<string, unknown>) : {};
  const patch: ConfigStatusPatch = {};
  let differs = false;

  if (options.conditions) {
    const previous = Array.isArray(existing['conditions']) ? (existing['conditions'] as Record<string, unknown>[]) : [];
    const conditions = desiredConditions(outcome).map((condition): StatusCondition => {
      const before = previous.find((candidate) => candidate['type'] === condition.type);
      const since = before?.['status'] === condition.status && typeof before['lastTransitionTime'] === 'string' ? before['lastTransitionTime'] : now;
      return {
        ...condition,
        lastTransitionTime: since,
        ...(outcome.generation !== undefined ? { observedGeneration: outcome.generation } : {}),
      };
    });
    // Conditions of other writers (a WorkloadEntry's Healthy) stay: a merge patch replaces the list.
    const desiredTypes = new Set<unknown>(conditions.map((condition) => condition.type));
    const foreign = previous.filter((condition) => !desiredTypes.has(condition['type'])) as unknown as StatusCondition[];
    conditions.push(...foreign);
    patch.conditions = conditions;
    if (outcome.generation !== undefined) patch.observedGeneration = outcome.generation;
    if (stableJson(previous) !== stableJson(conditions) || existing['observedGeneration'] !== patch.observedGeneration) differs = true;
  }

  if (options.analysis) {
    const messages: ValidationMessage[] = [
      ...outcome.errors.map((issue): ValidationMessage => ({ level: 'Error', path: issue.path, message: issue.message })),
      ...outcome.warnings.map((issue): ValidationMessage => ({ level: 'Warning', path: issue.path, message: issue.message })),
      ...analysisMessages,
    ];
    const before = existing['validationMessages'];
    if (messages.length > 0) {
      patch.validationMessages = messages;
      if (stableJson(before ?? null) !== stableJson(messages)) differs = true;
    } else if (before !== undefined && before !== null) {
      patch.validationMessages = null;
      differs = true;
    }
  }

  return differs ? patch : undefined;
}

function desiredConditions(outcome: ConfigOutcome): Omit<StatusCondition, 'lastTransitionTime'>[] {
  if (outcome.accepted) {
    const warnings = outcome.warnings.length;
    return [
      {
        type: 'Accepted',
        status: 'True',
        reason: 'Accepted',
        message:
          warnings === 0
            ? 'the resource is valid'
            : `the resource is valid, with ${warnings} warning${warnings === 1 ? '' : 's'}: ${describeIssues(outcome.warnings)}`,
      },
      { type: 'Reconciled', status: 'True', reason: 'Reconciled', message: 'this version is serving in the mesh' },
    ];
  }
  const serving = outcome.serving;
  return [
    { type: 'Accepted', status: 'False', reason: 'Invalid', message: describeIssues(outcome.errors) },
    serving
      ? {
          type: 'Reconciled',
          status: 'False',
          reason: 'LastGoodVersionServing',
          message: `this version is rejected; the last valid version (${serving.generation !== undefined ? `generation ${serving.generation}` : `resourceVersion ${serving.resourceVersion}`}) keeps serving`,
        }
      : { type: 'Reconciled', status: 'False', reason: 'Rejected', message: 'this version is rejected and no earlier version is serving' },
  ];
}

/** `spec.a: expected …; spec.b: expected …` (the first few, then how many more). */
export function describeIssues(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES_IN_MESSAGE).map((issue) => (issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`));
  const more = issues.length - shown.length;
  return more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; ');
}
