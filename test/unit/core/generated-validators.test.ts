import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { methods } from '../../../src/core/wire/index.js';
import { checks as paramsChecks } from '../../../src/core/wire/params-checks.generated.js';
import { compileSchema } from '../../../src/util/index.js';
import { generatedFiles, targets } from '../../../scripts/validators.mjs';

/**
 * Issue 14: the checks of our own fixed schemas are generated at build time (ajv standalone
 * code), so the daemon runs them without loading ajv's compiler or TypeBox. They must be
 * exactly what today's schemas generate, and judge as ajv compiling the schemas would.
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
  it('are what the schemas generate today (else: npm run validators)', async () => {
    for (const [file, code] of Object.entries(await generatedFiles(load))) {
      expect(readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8'), file).toBe(code);
    }
  });

  it('cover every method of the protocol, and nothing else', () => {
    expect(Object.keys(paramsChecks).sort()).toEqual(Object.keys(methods).sort());
  });

  it('give the verdicts and errors of the compiled schemas, for values like theirs', async () => {
    let checked = 0;
    for (const target of await targets(load)) {
      const generated = (await load(`${target.file}.js`)).checks as Record<string, ValidateFunction>;
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
    const { checks: registry } = await import('../../../src/mcp/registry-check.generated.js');
    const service = { id: 'a', name: 'svc', command: 'node', args: [], cwd: null, enabled: false, configVersion: 1, createdAt: 'x', updatedAt: 'x' };
    expect(registry.registryDocument({ schemaVersion: 1, services: [service] })).toBe(true);
    expect(registry.registryDocument({ schemaVersion: 1, services: [{ ...service, extra: 1 }] })).toBe(false);
    const { checks: model } = await import('../../../src/model/settings-check.generated.js');
    expect(model.modelSection({ baseUrl: 'https://x', model: 'm', maxRetries: 2, keyStorage: null })).toBe(true);
    expect(model.modelSection({ maxRetries: 9 })).toBe(false);
  });
});
