import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { methods } from '../../../src/core/wire/index.js';
import { checks as paramsChecks } from '../../../src/core/wire/params-checks.generated.js';
import { checks as registryChecks } from '../../../src/mcp/registry-check.generated.js';
import { RegistryDocument } from '../../../src/mcp/service-store.js';
import { STRICT, generatedFiles } from '../../../scripts/validators.mjs';

/**
 * Issue 14: the checks the daemon runs at every start and on every request are generated at
 * build time (ajv standalone code), so it loads neither ajv's compiler nor TypeBox for them.
 * They must be exactly what today's schemas generate, and judge as ajv compiling the schemas would.
 */
describe('the generated validators', () => {
  it('are what the schemas generate today (else: npm run validators)', () => {
    for (const [file, code] of Object.entries(generatedFiles({ methods, registryDocument: RegistryDocument }))) {
      expect(readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8'), file).toBe(code);
    }
  });

  it('cover every method, and nothing else', () => {
    expect(Object.keys(paramsChecks).sort()).toEqual(Object.keys(methods).sort());
  });

  const ajv = new Ajv(STRICT);
  /** Params a client might send: mostly the method's own property names, with any JSON values. */
  const paramsFor = (schema: object): fc.Arbitrary<unknown> => {
    const names = Object.keys((schema as { properties?: Record<string, unknown> }).properties ?? {});
    const key = names.length > 0 ? fc.oneof(fc.constantFrom(...names), fc.string()) : fc.string();
    return fc.oneof(fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }), fc.jsonValue({ maxDepth: 2 }));
  };
  const agree = (generated: ValidateFunction, compiled: ValidateFunction, value: unknown): void => {
    const verdict = generated(value);
    expect(verdict).toBe(compiled(value));
    expect(generated.errors ?? null).toEqual(compiled.errors ?? null);
  };

  it('give the verdicts and errors of the compiled schemas, for every method\'s params', () => {
    for (const [name, def] of Object.entries(methods)) {
      const compiled = ajv.compile(def.params);
      const generated = paramsChecks[name as keyof typeof paramsChecks];
      agree(generated, compiled, {});
      fc.assert(fc.property(paramsFor(def.params), (value) => agree(generated, compiled, value)), { numRuns: 40 });
    }
  });

  it('give the verdicts and errors of the compiled registry schema', () => {
    const compiled = ajv.compile(RegistryDocument);
    const service = fc.record({ id: fc.uuid(), name: fc.string(), transport: fc.constantFrom('stdio', 'http'), command: fc.string(), args: fc.array(fc.string()), enabled: fc.boolean() }, { requiredKeys: [] });
    const doc = fc.record({ schemaVersion: fc.oneof(fc.constant(1), fc.integer()), services: fc.array(service, { maxLength: 3 }) }, { requiredKeys: [] });
    agree(registryChecks.registryDocument, compiled, { schemaVersion: 1, services: [] });
    fc.assert(fc.property(fc.oneof(doc, fc.jsonValue({ maxDepth: 3 })), (value) => agree(registryChecks.registryDocument, compiled, value)), { numRuns: 200 });
  });
});
