import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/index.js';
import { methods, openRpcDocument, renderErrorsMarkdown, renderProtocolMarkdown } from '../../src/core/wire/index.js';

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');

describe('documentation stays true to the code', () => {
  it('docs/protocol.md and docs/errors.md match the protocol definition (run `npm run docs`)', () => {
    expect(read('docs/protocol.md')).toBe(renderProtocolMarkdown());
    expect(read('docs/errors.md')).toBe(renderErrorsMarkdown());
  });

  it('the README names every error code and every wispctl command', () => {
    const readme = read('README.md');
    for (const code of ERROR_CODES) expect(readme, code).toContain(code);
    for (const command of ['wispctl status', 'wispctl events', 'wispctl mcp add', 'wispctl mcp list', 'wispctl mcp show', 'wispctl mcp edit', 'wispctl mcp remove', 'wispctl mcp activate', 'wispctl mcp disable', 'wispctl mcp refresh', 'wispctl mcp tools', 'wispctl mcp logs', 'wispctl mcp call', 'wispctl mcp env set', 'wispctl mcp env list', 'wispctl mcp env clear', 'wispctl mcp env carry-over', 'wispctl approvals', 'wispctl send', 'wispctl chat', 'wispctl sessions', 'wispctl model show', 'wispctl model set', 'wispctl model set-key', 'wispctl approve', 'wispctl deny', 'wispctl call', 'wispctl daemon start', 'wispctl daemon stop', 'wispctl daemon status', 'wispctl daemon install', 'wispctl daemon uninstall', 'wispctl install', 'wispctl install list', 'wispctl install show', 'wispctl install cancel', 'wispctl install discard', 'wispctl install settings', 'wispctl mcp sources', 'wispctl mcp sources add-project', 'wispctl mcp sources remove-project', 'wispctl mcp reload', 'wispctl mcp import', 'wispctl mcp add-remote', 'wispctl mcp header set', 'wispctl mcp header list', 'wispctl mcp header clear', 'wispctl mcp login', 'wispctl mcp logout']) {
      expect(readme, command).toContain(command);
    }
  });

  it('rpc.discover describes every method with its params', () => {
    const doc = openRpcDocument('1.2.3') as unknown as { methods: { name: string; params: { name: string; required: boolean }[] }[] };
    expect(doc.methods.map((m) => m.name)).toEqual(Object.keys(methods));
    const register = doc.methods.find((m) => m.name === 'services.register');
    expect(register?.params.map((p) => [p.name, p.required])).toEqual([
      ['name', true],
      ['command', true],
      ['args', false],
      ['cwd', false],
      ['timeoutMs', false],
    ]);
  });
});
