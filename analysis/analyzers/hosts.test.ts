import { describe, expect, test } from '@jest/globals';
import { hostCovers, hostsOverlap } from './hosts.js';

// The reference's host.Name Matches (overlap, either way) and SubsetOf (covers, one way).
describe('hostsOverlap', () => {
  test.each([
    ['foo.com', 'foo.com', true],
    ['foo.com', 'bar.com', false],
    ['*.com', 'foo.com', true],
    ['bar.com', '*.com', true],
    ['*.foo.com', 'foo.com', false],
    ['*', 'foo.com', true],
    ['*', '*.com', true],
    ['*.a.b', '*.b', true],
    ['*.b', '*.a.b', true],
    ['*.a.b', '*.c.b', false],
    ['*.a.b', 'x.a.b', true],
    ['*.a.b', 'x.c.b', false],
    ['*.example.com', '*example.com', true],
  ])('%s and %s: %s', (a, b, overlap) => {
    expect(hostsOverlap(a, b)).toBe(overlap);
    expect(hostsOverlap(b, a)).toBe(overlap);
  });
});

describe('hostCovers', () => {
  test.each([
    ['*.b', '*.a.b', true],
    ['*.a.b', '*.b', false],
    ['*.b', 'a.b', true],
    ['a.b', '*.b', false],
    ['*', '*.b', true],
  ])('%s covers %s: %s', (pattern, host, covers) => {
    expect(hostCovers(pattern, host)).toBe(covers);
  });
});
