import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BROWSER_APP, CLIENT_AREAS, CLI_FORBIDDEN_PACKAGES, GENERATED, LAYERS, allowedTargets } from '../../layers.js';

const src = new URL('../../src/', import.meta.url).pathname;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Every specifier a file imports: import, export-from, import type and import(), as TypeScript reads them. */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((entry) => entry.fileName);
}

interface Edge { readonly file: string; readonly spec: string; readonly from: string; readonly to: string; readonly target: string }

function edges(): Edge[] {
  return files(src).flatMap((file) => {
    const from = path.relative(src, file).split(path.sep)[0] ?? '';
    return specifiers(file).filter((spec) => spec.startsWith('.')).map((spec) => {
      const target = path.relative(src, path.resolve(path.dirname(file), spec)).split(path.sep).join('/');
      return { file: path.relative(src, file), spec, from, to: target.split('/')[0] ?? '', target };
    });
  });
}

describe('layering (the graph declared in layers.js)', () => {
  it('sees the imports it checks, import() included', () => {
    const all = edges();
    expect(all.length).toBeGreaterThan(200);
    expect(specifiers(path.join(src, 'cli/main.ts')).length).toBeGreaterThan(3);
    expect(ts.preProcessFile("const m = await import('../x/index.js');", true, true).importedFiles.map((f) => f.fileName)).toEqual(['../x/index.js']);
  });

  it('every area in src/ is declared, and the graph has no cycle', () => {
    const areas = readdirSync(src, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort();
    expect(areas).toEqual(Object.keys(LAYERS).sort());
    const depth = new Map<string, number>();
    const visit = (area: string, seen: string[]): number => {
      expect(seen, `cycle: ${[...seen, area].join(' -> ')}`).not.toContain(area);
      const known = depth.get(area);
      if (known !== undefined) return known;
      const d = 1 + Math.max(0, ...(LAYERS[area] ?? []).map((to) => visit(to, [...seen, area])));
      depth.set(area, d);
      return d;
    };
    for (const area of areas) visit(area, []);
    expect(LAYERS.core).toEqual([]);
  });

  it('no import crosses areas except along a declared edge, through a door', () => {
    const bad = edges()
      .filter((edge) => edge.to !== edge.from)
      .filter((edge) => !allowedTargets(edge.from).includes(edge.target))
      .map((edge) => `${edge.file} imports ${edge.spec}`);
    expect(bad).toEqual([]);
  });

  it('each generated check is imported only by the area layers.js names for it (core by none)', () => {
    const seen = files(src).flatMap((file) => {
      const area = path.relative(src, file).split(path.sep)[0] ?? '';
      return specifiers(file).filter((spec) => spec.startsWith('#')).map((spec) => ({ area, spec, file: path.relative(src, file) }));
    });
    expect(seen.length).toBeGreaterThanOrEqual(8);
    const bad = seen.filter(({ area, spec }) => !(GENERATED[area] ?? []).some((name) => spec === `#generated/${name}.js`)).map((s) => `${s.file} imports ${s.spec}`);
    expect(bad).toEqual([]);
    expect(GENERATED.core).toBeUndefined();
  });

  it('the areas never import control, and core imports no other area and no node: module', () => {
    for (const area of ['mcp', 'approvals', 'secrets', 'install', 'model', 'sessions']) {
      expect(edges().filter((edge) => edge.from === area && edge.to === 'control')).toEqual([]);
    }
    for (const file of files(path.join(src, 'core'))) {
      const outside = specifiers(file).filter((spec) => spec.startsWith('node:') || (spec.startsWith('.') && !path.resolve(path.dirname(file), spec).startsWith(path.join(src, 'core'))));
      expect(outside, path.relative(src, file)).toEqual([]);
    }
  });

  it('wispctl reaches the MCP gateway (which loads the MCP SDK) only with import(), in the command that runs it', () => {
    const toGateway = edges().filter((edge) => edge.from === 'cli' && edge.to === 'gateway');
    expect(toGateway.map((edge) => edge.file)).toEqual(['cli/commands/mcp-serve.ts']);
    const text = readFileSync(path.join(src, 'cli', 'commands', 'mcp-serve.ts'), 'utf8');
    expect(text).toContain("await import('../../gateway/index.js')");
    expect(text).not.toMatch(/^import[^(]*gateway\/index\.js/m);
  });

  it('wispctl imports none of the daemon\'s packages', () => {
    for (const file of CLIENT_AREAS.flatMap((area) => files(path.join(src, area)))) {
      const bad = specifiers(file).filter((spec) => CLI_FORBIDDEN_PACKAGES.some((name) => spec === name || spec.startsWith(`${name}/`)));
      expect(bad, path.relative(src, file)).toEqual([]);
    }
  });

  it('the panel\'s browser app imports only its own files, core\'s door, and Preact and htm through html.js alone', () => {
    const dir = path.join(src, BROWSER_APP.dir);
    const own = readdirSync(dir).filter((name) => name.endsWith('.js'));
    expect(own.length).toBeGreaterThan(10);
    const bad: string[] = [];
    const viaHtml: string[] = [];
    for (const name of own) {
      for (const spec of specifiers(path.join(dir, name))) {
        if (spec === BROWSER_APP.vendor || BROWSER_APP.packages.includes(spec)) {
          viaHtml.push(`${name} imports ${spec}`);
          continue;
        }
        const target = path.relative(src, path.resolve(dir, spec)).split(path.sep).join('/');
        const sibling = spec.startsWith('./') && own.includes(spec.slice(2));
        if (!sibling && !BROWSER_APP.imports.includes(target)) bad.push(`${name} imports ${spec}`);
      }
    }
    expect(bad).toEqual([]);
    // Every element of every page is made by html.js, which shows all text through core's escaping.
    expect(viaHtml.sort()).toEqual([`html.js imports ${BROWSER_APP.vendor}`, ...BROWSER_APP.packages.map((p) => `html.js imports ${p}`)].sort());
    // What the browser app may reach of core is pure: checked above for all of core.
    expect(BROWSER_APP.imports.every((target) => allowedTargets('ui').includes(target))).toBe(true);
  });
});
