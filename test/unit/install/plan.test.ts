import { describe, expect, it } from 'vitest';
import { makePlan, serviceNameFor } from '../../../src/install/index.js';

const REGISTRY = 'https://registry.npmjs.org/';
const input = { package: '@scope/server', version: '1.2.3', bin: 'server', args: ['--port', '1'] };

describe('install plans', () => {
  it('has a digest that covers package, version, bin, args and registry, and a directory named by it', () => {
    const plan = makePlan(input, REGISTRY, '/data/mcp-installs');
    expect(plan.digest).toMatch(/^[0-9a-f]{32}$/);
    expect(plan.directory).toBe(`/data/mcp-installs/${plan.digest}`);
    expect(makePlan(input, REGISTRY, '/elsewhere').digest).toBe(plan.digest);
    for (const other of [
      { ...input, version: '1.2.4' },
      { ...input, bin: 'other' },
      { ...input, args: ['--port', '2'] },
      { ...input, args: [] },
      { ...input, package: '@scope/server2' },
    ]) {
      expect(makePlan(other, REGISTRY, '/data/mcp-installs').digest).not.toBe(plan.digest);
    }
    expect(makePlan(input, 'http://127.0.0.1:4873/', '/data/mcp-installs').digest).not.toBe(plan.digest);
  });

  it.each([
    ['version', { version: '^1.2.3' }],
    ['version', { version: '~1.2.3' }],
    ['version', { version: 'latest' }],
    ['version', { version: '1.2' }],
    ['version', { version: '=1.2.3' }],
    ['version', { version: 'v1.2.3' }],
    ['version', { version: ' 1.2.3' }],
    ['version', { version: 'github:a/b' }],
    ['version', { version: 'file:../x' }],
    ['package', { package: 'Capital' }],
    ['package', { package: './local' }],
    ['package', { package: 'https://x.example/y.tgz' }],
    ['package', { package: '@scope' }],
    ['bin', { bin: '../escape' }],
    ['bin', { bin: '' }],
    ['args', { args: ['a\u0000b'] }],
  ])('refuses a bad %s (%j) with INVALID_PLAN', (field, change) => {
    expect(() => makePlan({ ...input, ...change }, REGISTRY, '/d')).toThrow(expect.objectContaining({ code: 'INVALID_PLAN', details: { field } }));
  });

  it('accepts prerelease and build-less exact versions', () => {
    expect(makePlan({ ...input, version: '2026.8.31' }, REGISTRY, '/d').version).toBe('2026.8.31');
    expect(makePlan({ ...input, version: '1.0.0-beta.2' }, REGISTRY, '/d').version).toBe('1.0.0-beta.2');
  });

  it('names the service after the bin, unique among those taken', () => {
    const taken = new Set(['server', 'server-2']);
    expect(serviceNameFor('server', (n) => taken.has(n))).toBe('server-3');
    expect(serviceNameFor('mcp-server-everything', () => false)).toBe('mcp-server-everything');
  });
});
