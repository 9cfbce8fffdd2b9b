import { KIND_NAMES, validateResource, type KindName, type ValidationIssue } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';
import { unreachableRuleFindings } from './virtual-service-unreachable-rules.js';

/** `spec.http[0].route: expected …`: the field path first, as the webhook and `meshctl validate` print it. */
function issueText(issue: ValidationIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

/**
 * MSH0106 and MSH0133: the validation of the webhook and `meshctl validate` (crds' `validateResource`)
 * over every document of one mesh kind, valid or not. For VirtualServices also MSH0130 and MSH0131,
 * which the reference's validation raises as warnings of their own types.
 */
function schemaAnalyzer(kind: KindName): Analyzer {
  return {
    name: `schema.ValidationAnalyzer.${kind}`,
    description: `Runs schema validation as an analyzer and reports any violations for ${kind}`,
    inputs: ['MeshObject'],
    analyze(context) {
      for (const resource of context.read('MeshObject')) {
        if (resource.kind !== kind) continue;
        const { errors, warnings } = validateResource(resource.object);
        for (const error of errors) context.report('SchemaValidationError', resource, `Schema validation error: ${issueText(error)}`);
        for (const warning of warnings) context.report('SchemaWarning', resource, `Schema validation warning: ${issueText(warning)}`);
        if (kind !== 'VirtualService') continue;
        for (const finding of unreachableRuleFindings(resource.object.spec)) context.report(finding.type, resource, finding.message);
      }
    },
  };
}

export const SCHEMA_ANALYZERS: readonly Analyzer[] = KIND_NAMES.map(schemaAnalyzer);
