import { describe, expect, test } from '@jest/globals';
import { errorMessage, UsageError } from '../../runtime/index.js';
import { captureConfigFromFlags, capturesIpv6, DEFAULT_CAPTURE_CONFIG, type CaptureFlagValues } from './capture-config.js';
import { parseCidr } from './cidr.js';

describe('parseCidr', () => {
  test.each([
    ['10.1.2.3/8', 'ipv4', '10.0.0.0/8', false],
    ['192.168.7.9/32', 'ipv4', '192.168.7.9/32', false],
    ['0.0.0.0/0', 'ipv4', '0.0.0.0/0', false],
    ['127.0.0.1/32', 'ipv4', '127.0.0.1/32', true],
    ['127.5.0.0/16', 'ipv4', '127.5.0.0/16', true],
    ['fd00:0:0::1/8', 'ipv6', 'fd00::/8', false],
    ['2001:DB8:0:0:1:0:0:1/128', 'ipv6', '2001:db8::1:0:0:1/128', false],
    ['2001:db8:0:0:1::/64', 'ipv6', '2001:db8::/64', false],
    ['::1/128', 'ipv6', '::1/128', true],
    ['::/0', 'ipv6', '::/0', false],
    ['::ffff:10.1.2.3/120', 'ipv6', '::ffff:a01:200/120', false],
    ['fe80:0:0:1:0:0:0:0/64', 'ipv6', 'fe80:0:0:1::/64', false],
  ])('%s', (text, family, canonical, isLoopback) => {
    expect(parseCidr(text)).toEqual({ family, text: canonical, isLoopback });
  });

  test.each(['10.0.0.0', '10.0.0.0/33', '10.0.0/8', 'fd00::/129', 'fe80::1%eth0/64', 'nonsense/8', '*', ''])('%j is not a CIDR', (text) => {
    expect(parseCidr(text)).toBeUndefined();
  });
});

describe('captureConfigFromFlags', () => {
  test('no flags give the reference defaults', () => {
    expect(captureConfigFromFlags({})).toEqual(DEFAULT_CAPTURE_CONFIG);
    expect(DEFAULT_CAPTURE_CONFIG).toMatchObject({
      proxyPort: 15001,
      inboundCapturePort: 15006,
      inboundTunnelPort: 15008,
      proxyUids: ['1337'],
      proxyGids: ['1337'],
      interceptionMode: 'REDIRECT',
      tproxyMark: '1337',
      tproxyRouteTable: '133',
    });
  });

  test('an empty GID takes the UID; an explicit one does not', () => {
    expect(captureConfigFromFlags({ proxyUid: '1000,1001' })).toMatchObject({ proxyUids: ['1000', '1001'], proxyGids: ['1000', '1001'] });
    expect(captureConfigFromFlags({ proxyUid: '1000', proxyGid: '2000' })).toMatchObject({ proxyUids: ['1000'], proxyGids: ['2000'] });
  });

  test('lists are split on commas, trimmed and made canonical', () => {
    const config = captureConfigFromFlags({
      meshInboundPorts: ' 80, 0443 ,8000:8080,',
      meshServiceCidr: '10.1.0.0/8 , fd00::1/8',
      orchVirtInterfaces: 'eth1, veth+',
    });
    expect(config.inboundPorts).toEqual(['80', '443', '8000:8080']);
    expect(config.outboundCidrs).toEqual([
      { family: 'ipv4', text: '10.0.0.0/8', isLoopback: false },
      { family: 'ipv6', text: 'fd00::/8', isLoopback: false },
    ]);
    expect(config.virtInterfaces).toEqual(['eth1', 'veth+']);
  });

  test('"*" selects every inbound port and every outbound destination', () => {
    expect(captureConfigFromFlags({ meshInboundPorts: '*', meshServiceCidr: ' * ' })).toMatchObject({ inboundPorts: '*', outboundCidrs: '*' });
  });

  test('name servers are split by family', () => {
    const config = captureConfigFromFlags({ redirectDns: true }, ['10.96.0.10', 'fd00::a', '127.0.0.53']);
    expect(config.dnsServersV4).toEqual(['10.96.0.10', '127.0.0.53']);
    expect(config.dnsServersV6).toEqual(['fd00::a']);
  });

  test('IPv6 is captured only when an IPv6 range is named', () => {
    expect(capturesIpv6(captureConfigFromFlags({ meshServiceCidr: '*' }))).toBe(false);
    expect(capturesIpv6(captureConfigFromFlags({ meshServiceCidr: '*', meshServiceExcludeCidr: 'fd00::/8' }))).toBe(true);
    expect(capturesIpv6(captureConfigFromFlags({ meshServiceCidr: '2001:db8::/32' }))).toBe(true);
  });

  test.each<[string, CaptureFlagValues, RegExp]>([
    ['bad proxy port', { proxyPort: '15001x' }, /^invalid --proxy-port "15001x": expected a port from 1 to 65535$/],
    ['port out of range', { inboundCapturePort: '70000' }, /^invalid --inbound-capture-port "70000"/],
    ['port zero', { inboundTunnelPort: '0' }, /^invalid --inbound-tunnel-port "0"/],
    ['bad inbound port', { meshInboundPorts: '80,http' }, /^invalid --mesh-inbound-ports "80,http": "http" is not a port/],
    ['inverted range', { meshInboundPorts: '9000:8000' }, /^invalid --mesh-inbound-ports "9000:8000"/],
    ['wildcard in a port list', { meshInboundPorts: '80,*' }, /^invalid --mesh-inbound-ports "80,\*"/],
    ['bad exclude port', { meshLocalExcludePorts: '-1' }, /^invalid --mesh-local-exclude-ports "-1"/],
    ['bad outbound port', { meshOutboundPorts: '65536' }, /^invalid --mesh-outbound-ports "65536"/],
    ['bad outbound exclude', { meshLocalOutboundPortsExclude: 'all' }, /^invalid --mesh-local-outbound-ports-exclude "all"/],
    ['bad CIDR', { meshServiceCidr: '10.0.0.0/8,10.0.0.300/32' }, /^invalid --mesh-service-cidr "10.0.0.0\/8,10.0.0.300\/32": "10.0.0.300\/32" is not a CIDR/],
    ['bare address', { meshServiceCidr: '10.0.0.1' }, /^invalid --mesh-service-cidr "10.0.0.1": "10.0.0.1" is not a CIDR/],
    ['wildcard in a CIDR list', { meshServiceCidr: '*,10.0.0.0/8' }, /"\*" must stand alone/],
    ['wildcard exclusion', { meshServiceExcludeCidr: '*' }, /^invalid --mesh-service-exclude-cidr "\*": "\*" would exclude every destination/],
    ['bad exclude CIDR', { meshServiceExcludeCidr: 'fd00::/200' }, /^invalid --mesh-service-exclude-cidr "fd00::\/200"/],
    ['unknown mode', { meshInboundInterceptionMode: 'tproxy' }, /^invalid --mesh-inbound-interception-mode "tproxy": expected REDIRECT or TPROXY$/],
    ['bad mark', { meshInboundTproxyMark: 'mark' }, /^invalid --mesh-inbound-tproxy-mark "mark"/],
    ['bad route table', { meshInboundTproxyRouteTable: 'main' }, /^invalid --mesh-inbound-tproxy-route-table "main"/],
    ['bad uid', { proxyUid: 'mesh-proxy' }, /^invalid --proxy-uid "mesh-proxy": "mesh-proxy" is not a numeric id/],
    ['bad gid', { proxyGid: '1,x' }, /^invalid --proxy-gid "1,x"/],
    ['bad interface', { orchVirtInterfaces: 'a very long interface name' }, /^invalid --orch-virt-interfaces/],
  ])('%s is a usage error naming the flag', (_name, flags, message) => {
    let error: unknown;
    try {
      captureConfigFromFlags(flags);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(errorMessage(error)).toMatch(message);
  });

  test('marks and tables are accepted in the forms ip and iptables take', () => {
    expect(captureConfigFromFlags({ meshInboundTproxyMark: '0x539', meshInboundTproxyRouteTable: '100' })).toMatchObject({
      tproxyMark: '0x539',
      tproxyRouteTable: '100',
    });
  });
});
