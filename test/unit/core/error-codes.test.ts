import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG, ERROR_CODES, isErrorCode, isWireErrorCode } from '../../../src/core/index.js';
import { methods } from '../../../src/core/wire/index.js';
import { repoRoot } from '../../helpers/wispd.js';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/**
 * Where a code literal can start its way to a client: an error thrown or answered
 * (WispError, Failure, errorBody, fail/failure helpers), a `code:` field of an event, a
 * state or a persisted record, a registry file moved aside, or a literal checked against
 * the catalog's type. Comparisons (`error.code === 'ENOENT'`) only read codes and are not
 * included: Node's errno codes are compared that way.
 */
const CODE_POSITIONS = [
  /\bWispError\(\s*'([A-Z][A-Z0-9_]*)'/g,
  /\bFailure\(\s*'([A-Z][A-Z0-9_]*)'/g,
  /\b(?:errorBody|fail|failure|moveAside)\(\s*'([A-Z][A-Z0-9_]*)'/g,
  /\bcode:\s*'([A-Z][A-Z0-9_]*)'/g,
  /'([A-Z][A-Z0-9_]*)'\s+satisfies\s+ErrorCode\b/g,
];

function codesInSource(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(path.join(repoRoot, 'src'))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of CODE_POSITIONS) {
      for (const match of text.matchAll(pattern)) {
        const code = match[1] ?? '';
        found.set(code, [...(found.get(code) ?? []), path.relative(repoRoot, file)]);
      }
    }
  }
  return found;
}

describe('the error catalog', () => {
  const found = codesInSource();

  it('finds the codes the source sends (the scan sees what it checks)', () => {
    // Codes reached through each kind of position: thrown, answered by the socket server,
    // written into a persisted install record, and a registry moved aside at start.
    for (const code of ['INSTALL_FAILED', 'PARSE_ERROR', 'INTERRUPTED', 'REGISTRY_UNREADABLE', 'REGISTRY_INVALID', 'LIMIT_EXCEEDED']) {
      expect([...found.keys()], code).toContain(code);
    }
    expect(found.size).toBeGreaterThan(40);
  });

  it('has every code that can reach a client', () => {
    const missing = [...found.entries()].filter(([code]) => !isErrorCode(code)).map(([code, files]) => `${code} (${[...new Set(files)].join(', ')})`);
    expect(missing).toEqual([]);
  });

  it('is documented whole in docs/errors.md, and named in the guides where it comes up', () => {
    const errorsMd = readFileSync(path.join(repoRoot, 'docs', 'errors.md'), 'utf8');
    const guides = ['wispctl', 'gateway', 'panel', 'approvals', 'model', 'servers', 'installs', 'running', 'development', 'security', 'operations'];
    const readme = guides.map((guide) => readFileSync(path.join(repoRoot, 'docs', `${guide}.md`), 'utf8')).join('\n');
    for (const code of ERROR_CODES) {
      expect(errorsMd, code).toContain(`| \`${code}\` |`);
      expect(readme, code).toContain(`\`${code}\``);
    }
  });

  it('declares no local code as an error of a method (local codes never cross the socket)', () => {
    const local = ERROR_CODES.filter((code) => !isWireErrorCode(code));
    expect(local.sort()).toEqual(['ALREADY_RUNNING', 'CLIENT_CONFIG_INVALID', 'DAEMON_NOT_RUNNING', 'PATH_TOO_LONG', 'UNSAFE_DIRECTORY']);
    for (const [name, def] of Object.entries(methods)) {
      for (const code of def.errors) expect(isWireErrorCode(code), `${name}: ${code}`).toBe(true);
    }
    for (const code of local) expect(ERROR_CATALOG[code].description).toMatch(/^(Client side|Startup):/);
  });
});
