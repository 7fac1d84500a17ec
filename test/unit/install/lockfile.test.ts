import { describe, expect, it } from 'vitest';
import { canonicalTarball, isAcceptableSpec, verifyLockfile } from '../../../src/install/index.js';

const REGISTRY = 'https://registry.npmjs.org/';
const sha = `sha512-${'A'.repeat(86)}==`;
const entry = (name: string, version: string, extra: Record<string, unknown> = {}) => ({
  version,
  resolved: canonicalTarball(REGISTRY, name, version),
  integrity: sha,
  ...extra,
});

/** A lock as npm writes it for a plan depending on mcp-echo@1.2.3 (with one scoped dependency). */
function goodLock(): { lockfileVersion: number; packages: Record<string, Record<string, unknown>> } {
  return {
    lockfileVersion: 3,
    packages: {
      '': { name: 'plan', dependencies: { 'mcp-echo': '1.2.3' } },
      'node_modules/mcp-echo': entry('mcp-echo', '1.2.3', { dependencies: { '@scope/util': '^2.0.0', aliased: 'npm:real-pkg@^1.0.0' } }),
      'node_modules/@scope/util': entry('@scope/util', '2.1.0'),
      'node_modules/aliased': { ...entry('real-pkg', '1.4.0'), name: 'real-pkg' },
      'node_modules/mcp-echo/node_modules/nested': entry('nested', '0.1.0', { optionalDependencies: { other: '~1.2' } }),
    },
  };
}
const expected = { name: 'mcp-echo', version: '1.2.3' };

describe('the lockfile verifier', () => {
  it('accepts registry tarballs with sha512 integrity, scoped, aliased and nested', () => {
    expect(verifyLockfile(goodLock(), expected, REGISTRY)).toEqual([]);
    expect(canonicalTarball(REGISTRY, '@scope/util', '2.1.0')).toBe('https://registry.npmjs.org/@scope/util/-/util-2.1.0.tgz');
  });

  it.each<[string, (lock: ReturnType<typeof goodLock>) => void, string]>([
    ['a link to a local directory', (l) => (l.packages['node_modules/local'] = { resolved: '../local', link: true }), 'link'],
    ['an entry outside node_modules', (l) => (l.packages['packages/workspace'] = { version: '1.0.0' }), 'outside node_modules'],
    ['a git dependency without integrity', (l) => (l.packages['node_modules/@scope/util'] = { version: '2.1.0', resolved: 'git+ssh://git@github.com/x/y.git#abc' }), 'resolves to git+ssh'],
    ['a file: tarball', (l) => (l.packages['node_modules/@scope/util'] = { version: '2.1.0', resolved: 'file:../util.tgz', integrity: sha }), 'resolves to file:'],
    ['a bundled dependency', (l) => (l.packages['node_modules/mcp-echo/node_modules/b'] = { version: '1.0.0', inBundle: true }), 'bundled'],
    ['another registry', (l) => (l.packages['node_modules/@scope/util'] = { ...entry('@scope/util', '2.1.0'), resolved: 'https://evil.example.com/@scope/util/-/util-2.1.0.tgz' }), 'not https://registry.npmjs.org'],
    ['a sha1 integrity', (l) => (l.packages['node_modules/@scope/util'] = { ...entry('@scope/util', '2.1.0'), integrity: 'sha1-abc' }), 'sha512'],
    ['no resolved at all', (l) => (l.packages['node_modules/@scope/util'] = { version: '2.1.0', integrity: sha }), 'no resolved'],
    ['a tarball-URL dependency that looks like a registry URL', (l) => ((l.packages['node_modules/mcp-echo'] as { dependencies: Record<string, string> }).dependencies['@scope/util'] = 'https://registry.npmjs.org/@scope/util/-/util-2.1.0.tgz'), 'only semver ranges'],
    ['a github shorthand dependency', (l) => ((l.packages['node_modules/mcp-echo'] as { dependencies: Record<string, string> }).dependencies['@scope/util'] = 'someone/util'), 'only semver ranges'],
    ['a second root dependency', (l) => ((l.packages[''] as { dependencies: Record<string, string> }).dependencies.extra = '1.0.0'), 'exactly mcp-echo@1.2.3'],
    ['a range instead of the exact root version', (l) => ((l.packages[''] as { dependencies: Record<string, string> }).dependencies['mcp-echo'] = '^1.2.3'), 'exactly mcp-echo@1.2.3'],
    ['an old lockfile version', (l) => (l.lockfileVersion = 1), 'must be 3'],
  ])('rejects %s', (_name, spoil, text) => {
    const lock = goodLock();
    spoil(lock);
    const problems = verifyLockfile(lock, expected, REGISTRY);
    expect(problems.map((p) => `${p.path} ${p.problem}`).join('\n')).toContain(text);
  });

  it('accepts only semver ranges and npm: aliases as dependency specs', () => {
    for (const spec of ['1.2.3', '^1.0.0', '~2.1', '>=1 <3', '*', '1.x', 'npm:pkg@^1.0.0', 'npm:@s/p@1.0.0']) expect(isAcceptableSpec(spec), spec).toBe(true);
    for (const spec of ['latest', 'file:../x', 'git+https://x/y.git', 'github:a/b', 'a/b', 'https://x/y.tgz', './dir', 'npm:pkg', 'workspace:*', 42]) expect(isAcceptableSpec(spec), String(spec)).toBe(false);
  });
});
