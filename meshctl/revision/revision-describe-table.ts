import { formatTable } from '../kube/table.js';
import type { PodSummary, RevisionDescription } from './revision-describe.js';

/**
 * `x revision describe` as a table: the installation records, the webhooks, then the reference's
 * `REVISION MESHD-ENABLED CONTROL-PLANE-PODS` and `REVISION DECLARED-GATEWAYS GATEWAY-POD` tables
 * (tabwriter padding 1); `-v` adds the namespaces and pods using the revision.
 */
export function renderRevisionDescription(description: RevisionDescription): string {
  const sections = [operatorSection(description), webhookSection(description), renderRevisionSummaries([description])];
  if (description.namespaces) sections.push(namespaceSection(description.namespaces));
  if (description.pods)
    sections.push(`PODS: (${description.pods.length})\n${description.pods.length === 0 ? 'No pods for this revision\n' : podTable(description.pods)}`);
  return sections.join('\n');
}

/** The control-plane and gateway tables of revisions (also printed by `x revision list -v`). */
export function renderRevisionSummaries(descriptions: readonly RevisionDescription[]): string {
  const controlPlane: string[][] = [['REVISION', 'MESHD-ENABLED', 'CONTROL-PLANE-PODS']];
  for (const d of descriptions) {
    const pods = d.controlPlanePods.length > 0 ? d.controlPlanePods.map(qualified) : ['<no-meshd>'];
    pods.forEach((pod, i) => controlPlane.push(i === 0 ? [d.revision, d.meshdEnabled ? 'YES' : 'NO', pod] : ['', '', pod]));
  }
  const gateways = (kind: 'ingress' | 'egress'): string => {
    const rows: string[][] = [['REVISION', 'DECLARED-GATEWAYS', 'GATEWAY-POD']];
    for (const d of descriptions) {
      const { declared, pods } = kind === 'ingress' ? d.ingressGateways : d.egressGateways;
      const lines = Math.max(1, declared.length, pods.length);
      for (let i = 0; i < lines; i++) {
        const gateway = declared[i] ?? (i === 0 ? `<no-${kind}-enabled>` : '');
        const found = pods[i];
        const pod = found ? qualified(found) : i === 0 ? `<no-${kind}-pod>` : '';
        rows.push([i === 0 ? d.revision : '', gateway, pod]);
      }
    }
    return formatTable(rows, 1);
  };
  return `CONTROL PLANE:\n${formatTable(controlPlane, 1)}\nINGRESS GATEWAYS:\n${gateways('ingress')}\nEGRESS GATEWAYS:\n${gateways('egress')}`;
}

function operatorSection(description: RevisionDescription): string {
  const operators = description.meshOperators;
  let text = `MESH-OPERATOR CUSTOM RESOURCE: (${operators.length})\n`;
  if (operators.length === 0) {
    return `${text}${description.webhooks.length > 0 ? 'There are webhooks and meshd could be external to the cluster\n' : 'No installation records found.\n'}`;
  }
  operators.forEach((operator, i) => {
    text += `${i + 1}. ${operator.namespace}/${operator.name}\n  COMPONENTS:\n`;
    text += operator.components.length > 0 ? operator.components.map((c) => `  - ${c}\n`).join('') : '  no enabled components\n';
    text += '  CUSTOMIZATIONS:\n';
    text += operator.customizations.length > 0 ? operator.customizations.map((c) => `  - ${c}\n`).join('') : '  <no-customizations>\n';
  });
  return text;
}

function webhookSection(description: RevisionDescription): string {
  const header = `MUTATING WEBHOOK CONFIGURATIONS: (${description.webhooks.length})\n`;
  if (description.webhooks.length === 0) return `${header}No mutating webhook found for this revision. Something could be wrong with installation\n`;
  return header + formatTable([['WEBHOOK', 'TAG'], ...description.webhooks.map((w) => [w.name, w.tag ?? '<no-tag>'])], 1);
}

function namespaceSection(namespaces: readonly { name: string; label: string }[]): string {
  const header = `NAMESPACES: (${namespaces.length})\n`;
  if (namespaces.length === 0) return `${header}No namespaces select this revision\n`;
  return header + formatTable([['NAMESPACE', 'SELECTED-BY'], ...namespaces.map((n) => [n.name, n.label])], 1);
}

function podTable(pods: readonly PodSummary[]): string {
  return formatTable([['NAMESPACE', 'NAME', 'ADDRESS', 'STATUS', 'AGE'], ...pods.map((p) => [p.namespace, p.name, p.address, p.status, p.age])], 1);
}

const qualified = (pod: PodSummary): string => `${pod.namespace}/${pod.name}`;
