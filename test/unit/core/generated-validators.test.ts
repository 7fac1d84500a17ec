import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { methods } from '../../../src/core/wire/index.js';
import { checks as paramsChecks } from '#generated/params-checks.js';
import { compileSchema } from '../../../src/util/index.js';
import { generatedFiles, targets } from '../../../scripts/validators.mjs';

/**
 * Issue 14: the checks of our own fixed schemas are generated at build time (ajv standalone
 * code), so the daemon runs them without loading ajv's compiler or TypeBox. They must be
 * exactly what today's schemas generate, and judge as ajv compiling the schemas would.
 * Issue 37: the code is build output (dist/generated/), never in src/; only its declarations
 * (generated/) are committed.
 */

/** A module of src/, as the generator loads one from dist/. */
const load = async (path: string): Promise<Record<string, unknown>> => (await import(`../../../src/${path}`)) as Record<string, unknown>;

/** Values shaped like `schema`'s instances: mostly its own property names, with any JSON values, and any JSON at all. */
function valuesFor(schema: object): fc.Arbitrary<unknown> {
  const names = Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
  const key = names.length > 0 ? fc.oneof(fc.constantFrom(...names), fc.string()) : fc.string();
  return fc.oneof(fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 8 }), fc.jsonValue({ maxDepth: 3 }));
}

function agree(generated: ValidateFunction, compiled: ValidateFunction, value: unknown): void {
  const verdict = generated(value);
  expect(verdict).toBe(compiled(value));
  expect(generated.errors ?? null).toEqual(compiled.errors ?? null);
}

describe('the generated validators', () => {
  it('are what the schemas generate today: the declarations committed (else: npm run validators), the code built (else: npm run build)', async () => {
    for (const [file, code] of Object.entries(await generatedFiles(load))) {
      expect(readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8'), file).toBe(code);
    }
  });

  it('none is in src/: src/ imports them as #generated/<name>.js, which package.json maps to the build output', async () => {
    const src = fileURLToPath(new URL('../../../src/', import.meta.url));
    const inSrc = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => /generated/.test(file));
    expect(inSrc).toEqual([]);
    const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { imports: unknown };
    expect(pkg.imports).toEqual({ '#generated/*.js': { types: './generated/*.d.ts', default: './dist/generated/*.js' } });
    for (const target of await targets(load)) expect(existsSync(new URL(`../../../dist/generated/${target.file}.js`, import.meta.url)), target.file).toBe(true);
  });

  it('cover every method of the protocol, and nothing else', () => {
    expect(Object.keys(paramsChecks).sort()).toEqual(Object.keys(methods).sort());
  });

  it('give the verdicts and errors of the compiled schemas, for values like theirs', async () => {
    let checked = 0;
    for (const target of await targets(load)) {
      const generated = ((await import(new URL(`../../../dist/generated/${target.file}.js`, import.meta.url).href)) as { checks: Record<string, ValidateFunction> }).checks;
      for (const [name, schema] of Object.entries(target.schemas)) {
        const compiled = compileSchema(schema, target.mode);
        const check = generated[name];
        if (check === undefined) throw new Error(`${target.file} has no check ${name}`);
        agree(check, compiled, {});
        fc.assert(fc.property(valuesFor(schema), (value) => agree(check, compiled, value)), { numRuns: 30 });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(Object.keys(methods).length);
  });

  it('accept what the daemon writes: a registry with a service, settings with every field', async () => {
    const { checks: registry } = await import('#generated/registry-check.js');
    const service = { id: 'a', name: 'svc', command: 'node', args: [], cwd: null, enabled: false, configVersion: 1, createdAt: 'x', updatedAt: 'x' };
    expect(registry.registryDocument({ schemaVersion: 1, services: [service] })).toBe(true);
    expect(registry.registryDocument({ schemaVersion: 1, services: [{ ...service, extra: 1 }] })).toBe(false);
    const { checks: model } = await import('#generated/model-settings-check.js');
    expect(model.modelSection({ baseUrl: 'https://x', model: 'm', maxRetries: 2, keyStorage: null })).toBe(true);
    expect(model.modelSection({ maxRetries: 9 })).toBe(false);
  });
});
