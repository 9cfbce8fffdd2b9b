import { KIND_NAMES, validateResource, type KindName, type ValidationIssue } from '../../crds/index.js';
import type { Analyzer } from '../analyzer.js';

/** `spec.http[0].route: expected …`: the field path first, as the webhook and `meshctl validate` print it. */
function issueText(issue: ValidationIssue): string {
  return issue.path === '' ? issue.message : `${issue.path}: ${issue.message}`;
}

/**
 * MSH0106 and MSH0133: the validation of the webhook and `meshctl validate` (crds' `validateResource`)
 * over every document of one mesh kind, valid or not.
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
      }
    },
  };
}

export const SCHEMA_ANALYZERS: readonly Analyzer[] = KIND_NAMES.map(schemaAnalyzer);
