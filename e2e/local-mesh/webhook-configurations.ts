/**
 * The admission webhook configurations of the default revision, shaped as the reference's chart
 * renders them (`mesh-sidecar-injector` with its namespace and object webhooks, and
 * `mesh-validator-mesh-system`), calling the `meshd` service in `mesh-system`, with an empty
 * `caBundle` that the daemon patches. The local mesh applies them with kubectl.
 */
export function webhookConfigurationsYaml(): string {
  const service = (path: string): string => `    clientConfig:\n      service: {name: meshd, namespace: mesh-system, path: ${path}, port: 443}\n      caBundle: ""\n`;
  const injector = (name: string, namespaceSelector: string, objectSelector: string): string =>
    `  - name: ${name}\n${service('/inject')}    rules:\n    - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}\n    failurePolicy: Fail\n    sideEffects: None\n    admissionReviewVersions: [v1beta1, v1]\n    namespaceSelector: ${namespaceSelector}\n    objectSelector: ${objectSelector}\n`;
  const validator = (name: string, objectSelector: string): string =>
    `  - name: ${name}\n${service('/validate')}    rules:\n    - {operations: [CREATE, UPDATE], apiGroups: [security.mesh.io, networking.mesh.io], apiVersions: ["*"], resources: ["*"]}\n    failurePolicy: Ignore\n    sideEffects: None\n    admissionReviewVersions: [v1beta1, v1]\n    objectSelector: ${objectSelector}\n`;
  return [
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: MutatingWebhookConfiguration',
    'metadata:',
    '  name: mesh-sidecar-injector',
    '  labels: {mesh.io/rev: default, app: sidecar-injector}',
    'webhooks:',
    injector('rev.namespace.sidecar-injector.mesh.io', '{matchExpressions: [{key: mesh.io/rev, operator: In, values: [default]}, {key: mesh-injection, operator: DoesNotExist}]}', '{matchExpressions: [{key: sidecar.mesh.io/inject, operator: NotIn, values: ["false"]}]}') +
      injector('rev.object.sidecar-injector.mesh.io', '{matchExpressions: [{key: mesh.io/rev, operator: DoesNotExist}, {key: mesh-injection, operator: DoesNotExist}]}', '{matchExpressions: [{key: sidecar.mesh.io/inject, operator: NotIn, values: ["false"]}, {key: mesh.io/rev, operator: In, values: [default]}]}') +
      injector('namespace.sidecar-injector.mesh.io', '{matchExpressions: [{key: mesh-injection, operator: In, values: [enabled]}]}', '{matchExpressions: [{key: sidecar.mesh.io/inject, operator: NotIn, values: ["false"]}]}') +
      injector('object.sidecar-injector.mesh.io', '{matchExpressions: [{key: mesh-injection, operator: DoesNotExist}, {key: mesh.io/rev, operator: DoesNotExist}]}', '{matchExpressions: [{key: sidecar.mesh.io/inject, operator: In, values: ["true"]}, {key: mesh.io/rev, operator: DoesNotExist}]}'),
    '---',
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingWebhookConfiguration',
    'metadata:',
    '  name: mesh-validator-mesh-system',
    '  labels: {mesh.io/rev: default, app: meshd}',
    'webhooks:',
    validator('rev.validation.mesh.io', '{matchExpressions: [{key: mesh.io/rev, operator: In, values: [default]}]}') +
      validator('validation.mesh.io', '{matchExpressions: [{key: mesh.io/rev, operator: DoesNotExist}]}'),
  ].join('\n');
}
