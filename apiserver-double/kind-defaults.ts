import { isPlainObject } from './object-util.js';
import type { JsonObject } from './object-util.js';
import type { ResourceType } from './resource-type.js';

/** The user a write is made as (the CSR requestor fields copy it). */
export interface RequestUser {
  username: string;
  uid: string;
  groups: string[];
}

export const ADMIN_USER: RequestUser = {
  username: 'kubernetes-admin',
  uid: '',
  groups: ['system:masters', 'system:authenticated'],
};

/**
 * The defaulting and bookkeeping the real registries do for a few built-in kinds: namespace
 * phase and name label, service cluster IPs and port protocols, secret `stringData`, pod phase,
 * CSR requestor. Custom resources get none.
 */
export class KindDefaults {
  private nextServiceIp = 10;

  onCreate(type: ResourceType, object: JsonObject, user: RequestUser): void {
    if (type.custom) return;
    const metadata = object['metadata'] as JsonObject;
    switch (`${type.group}/${type.kind}`) {
      case '/Namespace': {
        const labels = { ...(isPlainObject(metadata['labels']) ? metadata['labels'] : {}) };
        labels['kubernetes.io/metadata.name'] = String(metadata['name']);
        metadata['labels'] = labels;
        object['spec'] = { finalizers: ['kubernetes'], ...(isPlainObject(object['spec']) ? object['spec'] : {}) };
        object['status'] = { phase: 'Active' };
        break;
      }
      case '/Service':
        this.defaultService(object, undefined);
        break;
      case '/Secret':
        foldStringData(object);
        if (object['type'] === undefined) object['type'] = 'Opaque';
        break;
      case '/Pod':
        object['status'] = { phase: 'Pending' };
        break;
      case 'coordination.k8s.io/Lease':
        normalizeMicroTimes(object['spec'], ['acquireTime', 'renewTime']);
        break;
      case 'certificates.k8s.io/CertificateSigningRequest': {
        const spec = isPlainObject(object['spec']) ? object['spec'] : {};
        object['spec'] = { ...spec, username: user.username, uid: user.uid, groups: user.groups };
        break;
      }
      default:
        break;
    }
  }

  onUpdate(type: ResourceType, object: JsonObject, previous: JsonObject): void {
    if (type.custom) return;
    switch (`${type.group}/${type.kind}`) {
      case '/Service':
        this.defaultService(object, previous);
        break;
      case '/Secret':
        foldStringData(object);
        break;
      case 'coordination.k8s.io/Lease':
        normalizeMicroTimes(object['spec'], ['acquireTime', 'renewTime']);
        break;
      case '/Namespace': {
        const metadata = object['metadata'] as JsonObject;
        metadata['labels'] = {
          ...(isPlainObject(metadata['labels']) ? metadata['labels'] : {}),
          'kubernetes.io/metadata.name': String(metadata['name']),
        };
        break;
      }
      case 'certificates.k8s.io/CertificateSigningRequest':
        for (const field of ['username', 'uid', 'groups', 'request', 'signerName']) {
          const before = (previous['spec'] as JsonObject | undefined)?.[field];
          if (before !== undefined && isPlainObject(object['spec'])) object['spec'][field] = before;
        }
        break;
      default:
        break;
    }
  }

  private defaultService(object: JsonObject, previous: JsonObject | undefined): void {
    const spec: JsonObject = isPlainObject(object['spec']) ? object['spec'] : {};
    object['spec'] = spec;
    const before = isPlainObject(previous?.['spec']) ? (previous['spec'] as JsonObject) : {};
    if (spec['type'] === undefined) spec['type'] = 'ClusterIP';
    if (spec['type'] !== 'ExternalName') {
      if (spec['clusterIP'] === undefined || spec['clusterIP'] === '') {
        spec['clusterIP'] = before['clusterIP'] ?? this.allocateServiceIp();
      }
      if (spec['clusterIPs'] === undefined) spec['clusterIPs'] = [spec['clusterIP']];
    }
    if (spec['sessionAffinity'] === undefined) spec['sessionAffinity'] = 'None';
    if (Array.isArray(spec['ports'])) {
      spec['ports'] = spec['ports'].map((p: unknown) =>
        isPlainObject(p) ? { ...p, protocol: p['protocol'] ?? 'TCP', targetPort: p['targetPort'] ?? p['port'] } : p,
      );
    }
  }

  private allocateServiceIp(): string {
    const n = this.nextServiceIp++;
    return `10.96.${Math.floor(n / 256) % 256}.${n % 256}`;
  }
}

function foldStringData(object: JsonObject): void {
  const stringData = object['stringData'];
  if (!isPlainObject(stringData)) return;
  const data: JsonObject = isPlainObject(object['data']) ? { ...object['data'] } : {};
  for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
  object['data'] = data;
  delete object['stringData'];
}

/** MicroTime fields come back with six fractional digits, as the real server re-encodes them. */
function normalizeMicroTimes(holder: unknown, fields: string[]): void {
  if (!isPlainObject(holder)) return;
  for (const field of fields) {
    const value = holder[field];
    if (typeof value !== 'string') continue;
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) continue;
    const micros = /\.(\d+)Z$/.exec(value)?.[1] ?? '';
    holder[field] = `${new Date(ms).toISOString().slice(0, 19)}.${micros.padEnd(6, '0').slice(0, 6)}Z`;
  }
}
