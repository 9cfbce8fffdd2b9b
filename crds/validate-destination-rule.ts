import type {
  ClientTlsSettings,
  ConnectionPoolSettings,
  DestinationRule,
  LoadBalancerSettings,
  OutlierDetection,
  PortTrafficPolicy,
  TrafficPolicy,
} from './destination-rule-schema.js';
import { LABELS } from '../names/index.js';
import { hostNameProblem, isDnsLabel, isFqdn } from './dns-names.js';
import { NANOS_PER_MILLISECOND, parseDurationNanos } from './duration.js';
import { isIpAddress } from './ip-address.js';
import { listWords } from './common-schemas.js';
import { checkExportTo, checkSelectorLabels, checkWorkloadSelector } from './validate-shared.js';
import type { IssueSink, Path } from './validation-issue.js';

const MAGLEV_TABLE_LIMIT = 5000011;
const TOPOLOGY_LABELS: ReadonlySet<string> = new Set(['topology.kubernetes.io/region', 'topology.kubernetes.io/zone', LABELS.subzone]);

function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n < 4) return true;
  if (n % 2 === 0) return false;
  for (let factor = 3; factor * factor <= n; factor += 2) {
    if (n % factor === 0) return false;
  }
  return true;
}

function checkClientTls(sink: IssueSink, path: Path, tls: ClientTlsSettings): void {
  const mode = tls.mode ?? 'DISABLE';
  if (tls.insecureSkipVerify === true) {
    if (mode === 'SIMPLE' && (tls.caCertificates !== undefined || tls.credentialName !== undefined || tls.subjectAltNames !== undefined)) {
      sink.error(path, 'insecureSkipVerify skips server verification: expected no caCertificates, credentialName or subjectAltNames with it');
    }
    if (mode === 'MUTUAL' && (tls.caCertificates !== undefined || tls.subjectAltNames !== undefined)) {
      sink.error(path, 'insecureSkipVerify skips server verification: expected no caCertificates or subjectAltNames with it');
    }
  }
  if ((mode === 'SIMPLE' || mode === 'MUTUAL') && tls.credentialName !== undefined) {
    for (const field of ['clientCertificate', 'privateKey', 'caCertificates', 'caCrl'] as const) {
      if (tls[field] !== undefined) {
        sink.error([...path, field], 'cannot be combined with credentialName: expected the certificates to come from the credential only');
      }
    }
    return;
  }
  if (mode === 'MUTUAL') {
    if (tls.clientCertificate === undefined || tls.clientCertificate === '') {
      sink.error([...path, 'clientCertificate'], 'required for mode MUTUAL unless credentialName is set: expected the client certificate file');
    }
    if (tls.privateKey === undefined || tls.privateKey === '') {
      sink.error([...path, 'privateKey'], 'required for mode MUTUAL unless credentialName is set: expected the client private key file');
    }
  }
  if (mode === 'MESH_MUTUAL') {
    const ignored = (['clientCertificate', 'privateKey', 'caCertificates', 'credentialName', 'caCrl'] as const).filter((field) => tls[field] !== undefined);
    if (ignored.length > 0) {
      sink.warn(path, `mode MESH_MUTUAL uses the mesh's workload certificates; ${listWords(ignored, 'and')} ${ignored.length === 1 ? 'is' : 'are'} ignored`);
    }
  }
}

function checkFailover(sink: IssueSink, path: Path, failover: readonly { from?: string | undefined; to?: string | undefined }[] | undefined): void {
  (failover ?? []).forEach((entry, i) => {
    const at = [...path, 'failover', i];
    const from = entry.from ?? '';
    const to = entry.to ?? '';
    if (from === to) sink.error(at, `expected different from and to regions, got "${from}" for both`);
    if (from.includes('/') || to.includes('/')) sink.error(at, "expected regions only (no zone or subzone after '/') in failover");
    if (from.includes('*') || to.includes('*')) sink.error(at, "expected regions without '*' wildcards in failover");
  });
}

function checkLoadBalancer(sink: IssueSink, path: Path, lb: LoadBalancerSettings, outlier: OutlierDetection | undefined): void {
  const hash = lb.consistentHash;
  if (hash !== undefined) {
    const hashPath = [...path, 'consistentHash'];
    if (hash.minimumRingSize !== undefined) {
      sink.warn([...hashPath, 'minimumRingSize'], 'minimumRingSize is deprecated: use ringHash.minimumRingSize');
      if (hash.ringHash !== undefined || hash.maglev !== undefined) {
        sink.error(hashPath, 'only one of minimumRingSize, ringHash or maglev may be set');
      }
    }
    if (hash.maglev !== undefined) {
      const size = hash.maglev.tableSize ?? 0;
      if (size === 0 || size >= MAGLEV_TABLE_LIMIT || !isPrime(size)) {
        sink.error([...hashPath, 'maglev', 'tableSize'], `expected a prime number below ${MAGLEV_TABLE_LIMIT} (such as 65537), got ${size}`);
      }
    }
    const seen = new Set<string>();
    (hash.httpCookie?.attributes ?? []).forEach((attribute, i) => {
      if (seen.has(attribute.name)) {
        sink.error([...hashPath, 'httpCookie', 'attributes', i, 'name'], `duplicate cookie attribute "${attribute.name}": expected unique names`);
      }
      seen.add(attribute.name);
    });
  }

  const locality = lb.localityLbSetting;
  if (locality !== undefined) {
    const at = [...path, 'localityLbSetting'];
    if ((locality.distribute ?? []).length > 0 && (locality.failover ?? []).length > 0) {
      sink.error(at, 'only one of distribute or failover may be set');
    }
    (locality.distribute ?? []).forEach((entry, i) => {
      let total = 0;
      for (const [to, weight] of Object.entries(entry.to ?? {})) {
        if (weight < 1 || weight > 100) {
          sink.error([...at, 'distribute', i, 'to', to], `expected a weight from 1 to 100, got ${weight}`);
        }
        total += weight;
      }
      if (total !== 100) sink.error([...at, 'distribute', i, 'to'], `expected weights adding up to 100, got ${total}`);
    });
    checkFailover(sink, at, locality.failover);
    if ((locality.failover ?? []).length > 0) {
      (locality.failoverPriority ?? []).forEach((label, i) => {
        if (TOPOLOGY_LABELS.has(label)) {
          sink.error([...at, 'failoverPriority', i], `topology label "${label}" cannot be combined with failover: expected other labels`);
        }
      });
    }
    if (((locality.failover ?? []).length > 0 || (locality.failoverPriority ?? []).length > 0) && outlier === undefined) {
      sink.warn(at, 'failover needs outlierDetection to notice unhealthy endpoints; without it traffic never fails over');
    }
  }

  const zoneAware = lb.zoneAwareLbSetting;
  if (zoneAware !== undefined) {
    const at = [...path, 'zoneAwareLbSetting'];
    (zoneAware.failoverPriority ?? []).forEach((label, i) => {
      if (TOPOLOGY_LABELS.has(label)) {
        sink.error([...at, 'failoverPriority', i], `topology label "${label}" is handled by zone-aware balancing itself: expected other labels`);
      }
    });
    checkFailover(sink, at, zoneAware.failover);
    if (((zoneAware.failover ?? []).length > 0 || (zoneAware.failoverPriority ?? []).length > 0) && outlier === undefined) {
      sink.warn(at, 'failover needs outlierDetection to notice unhealthy endpoints; without it traffic never fails over');
    }
  }

  if (lb.warmup?.aggression !== undefined && lb.warmup.aggression <= 0) {
    sink.error([...path, 'warmup', 'aggression'], `expected a number greater than 0, got ${lb.warmup.aggression}`);
  }
}

function checkConnectionPool(sink: IssueSink, path: Path, pool: ConnectionPoolSettings): void {
  if (pool.tcp === undefined && pool.http === undefined) {
    sink.error(path, 'expected at least one of tcp or http');
  }
  const http = pool.http;
  if (http !== undefined) {
    if (http.h2UpgradePolicy === 'UPGRADE' && http.useClientProtocol === true) {
      sink.error([...path, 'http'], 'useClientProtocol cannot be true when h2UpgradePolicy is UPGRADE: expected one of them');
    }
    if (http.http2KeepAlive !== undefined) {
      for (const field of ['interval', 'timeout'] as const) {
        if (http.http2KeepAlive[field] === undefined) {
          sink.error([...path, 'http', 'http2KeepAlive', field], 'required: expected a duration such as 30s');
        }
      }
    }
  }
  const idle = pool.tcp?.idleTimeout;
  if (idle !== undefined) {
    const nanos = parseDurationNanos(idle) ?? 0n;
    if (nanos !== 0n && (nanos < NANOS_PER_MILLISECOND || nanos % NANOS_PER_MILLISECOND !== 0n)) {
      sink.error([...path, 'tcp', 'idleTimeout'], `expected 0s (no timeout) or a duration of at least 1ms in whole milliseconds, got "${idle}"`);
    }
  }
}

function checkOutlierDetection(sink: IssueSink, path: Path, outlier: OutlierDetection): void {
  if (outlier.consecutiveErrors !== undefined) {
    sink.warn([...path, 'consecutiveErrors'], 'consecutiveErrors is deprecated: use consecutiveGatewayErrors or consecutive5xxErrors');
  }
  if ((outlier.consecutiveLocalOriginFailures ?? 0) > 0 && outlier.splitExternalLocalOriginErrors !== true) {
    sink.error(
      [...path, 'consecutiveLocalOriginFailures'],
      'takes effect only when local-origin errors are counted apart: expected splitExternalLocalOriginErrors: true',
    );
  }
}

function checkPortSettings(
  sink: IssueSink,
  path: Path,
  settings: Pick<PortTrafficPolicy, 'loadBalancer' | 'connectionPool' | 'outlierDetection' | 'tls'>,
): void {
  if (settings.loadBalancer) checkLoadBalancer(sink, [...path, 'loadBalancer'], settings.loadBalancer, settings.outlierDetection);
  if (settings.connectionPool) checkConnectionPool(sink, [...path, 'connectionPool'], settings.connectionPool);
  if (settings.outlierDetection) checkOutlierDetection(sink, [...path, 'outlierDetection'], settings.outlierDetection);
  if (settings.tls) checkClientTls(sink, [...path, 'tls'], settings.tls);
}

const TRAFFIC_POLICY_FIELDS = [
  'loadBalancer',
  'connectionPool',
  'outlierDetection',
  'tls',
  'portLevelSettings',
  'tunnel',
  'proxyProtocol',
  'retryBudget',
] as const;

function checkTrafficPolicy(sink: IssueSink, path: Path, policy: TrafficPolicy): void {
  if (TRAFFIC_POLICY_FIELDS.every((field) => policy[field] === undefined)) {
    sink.error(path, `expected at least one of ${listWords(TRAFFIC_POLICY_FIELDS)}`);
  }
  if (policy.tunnel !== undefined && policy.proxyProtocol !== undefined) {
    sink.error(path, 'only one of tunnel or proxyProtocol may be set');
  }
  checkPortSettings(sink, path, policy);

  const ports = new Map<number, number>();
  (policy.portLevelSettings ?? []).forEach((settings, i) => {
    const at = [...path, 'portLevelSettings', i];
    if (settings.port === undefined) {
      sink.error([...at, 'port'], 'required: expected the service port as {number: <port>}');
    } else {
      const first = ports.get(settings.port.number);
      if (first !== undefined) {
        sink.error([...at, 'port', 'number'], `port ${settings.port.number} already has settings in portLevelSettings[${first}]: expected each port once`);
      } else {
        ports.set(settings.port.number, i);
      }
    }
    const { loadBalancer, connectionPool, outlierDetection, tls } = settings;
    if (!loadBalancer && !connectionPool && !outlierDetection && !tls) {
      sink.error(at, 'expected at least one of loadBalancer, connectionPool, outlierDetection or tls');
    }
    checkPortSettings(sink, at, settings);
  });

  const tunnel = policy.tunnel;
  if (tunnel !== undefined) {
    if (tunnel.protocol !== undefined && tunnel.protocol !== 'CONNECT' && tunnel.protocol !== 'POST') {
      sink.error([...path, 'tunnel', 'protocol'], `expected CONNECT or POST, got "${tunnel.protocol}"`);
    }
    if (!isFqdn(tunnel.targetHost) && !isIpAddress(tunnel.targetHost)) {
      sink.error([...path, 'tunnel', 'targetHost'], `expected a fully qualified host name or an IP address, got "${tunnel.targetHost}"`);
    }
  }
}

export function validateDestinationRule(sink: IssueSink, resource: DestinationRule): void {
  const { spec } = resource;
  const hostProblem = hostNameProblem(spec.host);
  if (hostProblem !== undefined) sink.error(['spec', 'host'], hostProblem);
  if (spec.trafficPolicy !== undefined) checkTrafficPolicy(sink, ['spec', 'trafficPolicy'], spec.trafficPolicy);

  const names = new Map<string, number>();
  (spec.subsets ?? []).forEach((subset, i) => {
    const at = ['spec', 'subsets', i];
    if (!isDnsLabel(subset.name)) {
      sink.error([...at, 'name'], `expected a DNS label (letters, digits and '-', at most 63 characters), got "${subset.name}"`);
    }
    const first = names.get(subset.name);
    if (first !== undefined) {
      sink.error([...at, 'name'], `duplicate subset name "${subset.name}" (also subsets[${first}]): expected unique subset names`);
    } else {
      names.set(subset.name, i);
    }
    checkSelectorLabels(sink, [...at, 'labels'], subset.labels ?? {});
    if (subset.trafficPolicy !== undefined) checkTrafficPolicy(sink, [...at, 'trafficPolicy'], subset.trafficPolicy);
  });

  checkExportTo(sink, ['spec', 'exportTo'], spec.exportTo, resource.metadata.namespace, spec.workloadSelector !== undefined);
  checkWorkloadSelector(sink, ['spec', 'workloadSelector'], spec.workloadSelector);
}
