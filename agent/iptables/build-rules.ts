import { capturesIpv6, type CaptureConfig } from './capture-config.js';
import type { IpFamily } from './cidr.js';
import {
  AGENT_DNS_PORT,
  LOOPBACK_HOST,
  MESH_DIVERT,
  MESH_IN_REDIRECT,
  MESH_INBOUND,
  MESH_OUTPUT,
  MESH_REDIRECT,
  MESH_TPROXY,
  OUTBOUND_MARK,
  PASSTHROUGH_SOURCE,
  SSH_PORT,
} from './constants.js';
import { dnsUdpRules, hostCidr, ownerMatches } from './dns-rules.js';
import { RuleSetBuilder, type RuleSet } from './rule-set.js';

export interface IptablesRules {
  readonly ipv4: RuleSet;
  /** Empty unless an IPv6 range is captured or excluded. */
  readonly ipv6: RuleSet;
}

/** The sidecar's traffic-capture rules for both address families: a pure function of the config. */
export function buildIptablesRules(config: CaptureConfig): IptablesRules {
  return {
    ipv4: buildFamily(config, 'ipv4'),
    ipv6: capturesIpv6(config) ? buildFamily(config, 'ipv6') : new RuleSetBuilder('ipv6').build(),
  };
}

interface FamilyContext {
  readonly config: CaptureConfig;
  readonly family: IpFamily;
  readonly loopback: string;
  /** DNS capture is on for this family: asked for, and either all DNS or some name server of it. */
  readonly dns: boolean;
  readonly nameServers: readonly string[];
}

function buildFamily(config: CaptureConfig, family: IpFamily): RuleSet {
  const b = new RuleSetBuilder(family);
  const nameServers = family === 'ipv4' ? config.dnsServersV4 : config.dnsServersV6;
  const ctx: FamilyContext = {
    config,
    family,
    loopback: LOOPBACK_HOST[family],
    dns: config.redirectDns && (config.captureAllDns || nameServers.length > 0),
    nameServers,
  };
  const capturesInbound = config.inboundPorts === '*' || config.inboundPorts.length > 0;

  // IPv6 loopback is ::1/128 only, so the proxy needs ::6 on lo to bind its passthrough source.
  if (family === 'ipv6') b.ip('-6', 'addr', 'add', PASSTHROUGH_SOURCE.ipv6, 'dev', 'lo');
  for (const iface of config.virtInterfaces) b.insert('nat', 'PREROUTING', 1, '-i', iface, '-j', 'RETURN');

  b.append('nat', MESH_INBOUND, '-p', 'tcp', '--dport', String(config.inboundTunnelPort), '-j', 'RETURN');
  b.append('nat', MESH_REDIRECT, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', String(config.proxyPort));
  b.append('nat', MESH_IN_REDIRECT, '-p', 'tcp', '-j', 'REDIRECT', '--to-ports', String(config.inboundCapturePort));
  if (capturesInbound) addInbound(b, ctx);

  addOutbound(b, ctx);
  if (ctx.dns) {
    const { proxyUids, proxyGids, captureAllDns } = config;
    for (const rule of dnsUdpRules({ family, proxyUids, proxyGids, captureAll: captureAllDns, nameServers })) {
      b.append(rule.table, rule.chain, ...rule.spec);
    }
  }
  if (config.interceptionMode === 'TPROXY' && capturesInbound) addTproxyMarks(b, ctx);
  return b.build();
}

function addInbound(b: RuleSetBuilder, { config, family, loopback }: FamilyContext): void {
  const tproxy = config.interceptionMode === 'TPROXY';
  const table = tproxy ? 'mangle' : 'nat';
  if (tproxy) {
    // Marked packets are routed to lo by a policy rule, where TPROXY hands them to the proxy.
    b.append('mangle', MESH_DIVERT, '-j', 'MARK', '--set-mark', config.tproxyMark);
    b.append('mangle', MESH_DIVERT, '-j', 'ACCEPT');
    const inet = family === 'ipv4' ? 'inet' : 'inet6';
    b.ip('-f', inet, 'rule', 'add', 'fwmark', config.tproxyMark, 'lookup', config.tproxyRouteTable);
    b.ip('-f', inet, 'route', 'add', 'local', 'default', 'dev', 'lo', 'table', config.tproxyRouteTable);
    b.append(
      'mangle',
      MESH_TPROXY,
      ...['!', '-d', loopback, '-p', 'tcp', '-j', 'TPROXY'],
      ...['--tproxy-mark', `${config.tproxyMark}/0xffffffff`, '--on-port', String(config.inboundCapturePort)],
    );
  }
  b.append(table, 'PREROUTING', '-p', 'tcp', '-j', MESH_INBOUND);
  // The nat chain already returns the tunnel port; TPROXY mode intercepts in mangle, so it needs its own.
  if (tproxy) b.append('mangle', MESH_INBOUND, '-p', 'tcp', '--dport', String(config.inboundTunnelPort), '-j', 'RETURN');

  const capture = (...match: string[]): void => {
    if (tproxy) {
      b.append('mangle', MESH_INBOUND, ...match, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', '-j', MESH_DIVERT);
      b.append('mangle', MESH_INBOUND, ...match, '-j', MESH_TPROXY);
    } else {
      b.append('nat', MESH_INBOUND, ...match, '-j', MESH_IN_REDIRECT);
    }
  };
  if (config.inboundPorts === '*') {
    b.append(table, MESH_INBOUND, '-p', 'tcp', '--dport', SSH_PORT, '-j', 'RETURN');
    for (const port of config.inboundPortsExclude) b.append(table, MESH_INBOUND, '-p', 'tcp', '--dport', port, '-j', 'RETURN');
    capture('-p', 'tcp');
  } else {
    for (const port of config.inboundPorts) capture('-p', 'tcp', '--dport', port);
  }
}

function addOutbound(b: RuleSetBuilder, { config, family, loopback, dns, nameServers }: FamilyContext): void {
  const out = (...spec: string[]): void => void b.append('nat', MESH_OUTPUT, ...spec);
  b.append('nat', 'OUTPUT', '-p', 'tcp', '-j', MESH_OUTPUT);
  // Port exclusions come before anything that could send a connection back to the proxy.
  for (const port of config.outboundPortsExclude) out('-p', 'tcp', '--dport', port, '-j', 'RETURN');
  out('-o', 'lo', '-s', PASSTHROUGH_SOURCE[family], '-j', 'RETURN');

  const includesLoopback = config.outboundCidrs !== '*' && config.outboundCidrs.some((cidr) => cidr.isLoopback);
  // With DNS capture, TCP port 53 over lo must reach the DNS rules below instead of returning here.
  const notDns = dns ? ['-p', 'tcp', '!', '--dport', '53'] : [];
  for (const [match, id] of ownerMatches(config.proxyUids, config.proxyGids)) {
    // The proxy calling its own pod through a service VIP goes through inbound capture again.
    out('-o', 'lo', '!', '-d', loopback, ...notDns, '-m', 'owner', match, id, '-j', MESH_IN_REDIRECT);
    // The app calling itself over lo is left alone, unless loopback ranges were asked to be captured.
    if (!includesLoopback) out('-o', 'lo', ...notDns, '-m', 'owner', '!', match, id, '-j', 'RETURN');
    // Everything else the proxy sends leaves untouched, or it would loop back into the proxy.
    out('-m', 'owner', match, id, '-j', 'RETURN');
  }
  if (dns) {
    const toAgent = ['-j', 'REDIRECT', '--to-ports', String(AGENT_DNS_PORT)];
    if (config.captureAllDns) out('-p', 'tcp', '--dport', '53', ...toAgent);
    else for (const server of nameServers) out('-p', 'tcp', '--dport', '53', '-d', hostCidr(family, server), ...toAgent);
  }
  out('-d', loopback, '-j', 'RETURN');
  for (const cidr of config.outboundCidrsExclude) if (cidr.family === family) out('-d', cidr.text, '-j', 'RETURN');
  for (const port of config.outboundPorts) out('-p', 'tcp', '--dport', port, '-j', MESH_REDIRECT);

  if (config.outboundCidrs === '*') {
    out('-j', MESH_REDIRECT);
    for (const iface of config.virtInterfaces) b.insert('nat', 'PREROUTING', 1, '-i', iface, '-j', MESH_REDIRECT);
    return;
  }
  const include = config.outboundCidrs.filter((cidr) => cidr.family === family);
  if (include.length === 0) return;
  for (const cidr of include) {
    for (const iface of config.virtInterfaces) {
      b.insert('nat', 'PREROUTING', 1, '-i', iface, '-d', cidr.text, '-j', MESH_REDIRECT);
    }
    out('-d', cidr.text, '-j', MESH_REDIRECT);
  }
  out('-j', 'RETURN');
}

/**
 * TPROXY keeps the client's address, so replies and proxy → app packets are told apart by marks:
 * the connection mark restores the routing mark on replies, and 1338 marks the proxy's own
 * connections to the app so they are not intercepted again as inbound.
 */
function addTproxyMarks(b: RuleSetBuilder, { config, family, loopback }: FamilyContext): void {
  const mark = config.tproxyMark;
  b.append('mangle', 'PREROUTING', '-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'CONNMARK', '--save-mark');
  b.append('mangle', 'OUTPUT', '-p', 'tcp', '-o', 'lo', '-m', 'mark', '--mark', mark, '-j', 'RETURN');
  for (const [match, id] of ownerMatches(config.proxyUids, config.proxyGids)) {
    b.append('mangle', 'OUTPUT', '!', '-d', loopback, '-p', 'tcp', '-o', 'lo', '-m', 'owner', match, id, '-j', 'MARK', '--set-mark', OUTBOUND_MARK);
  }
  b.append('mangle', 'OUTPUT', '-p', 'tcp', '-m', 'connmark', '--mark', mark, '-j', 'CONNMARK', '--restore-mark');
  b.insert('mangle', MESH_INBOUND, 1, '-p', 'tcp', '-m', 'mark', '--mark', mark, '-j', 'RETURN');
  b.insert('mangle', MESH_INBOUND, 2, '-p', 'tcp', '-s', PASSTHROUGH_SOURCE[family], '-i', 'lo', '-j', 'RETURN');
  b.insert('mangle', MESH_INBOUND, 3, '-p', 'tcp', '-i', 'lo', '-m', 'mark', '!', '--mark', OUTBOUND_MARK, '-j', 'RETURN');
}
