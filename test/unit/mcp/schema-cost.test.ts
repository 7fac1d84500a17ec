import { describe, expect, it } from 'vitest';
import { checkSchemaCost } from '../../../src/mcp/schema-cost.js';
import { SchemaCompiler } from '../../../src/mcp/tool-catalog.js';

const check = (schema: Record<string, unknown>) => () => checkSchemaCost('t', schema);

/** ten refs to the next level, `levels` deep. */
function fanout(levels: number, width = 10): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let level = 0; level < levels; level++) defs[`d${level}`] = { allOf: Array.from({ length: width }, () => ({ $ref: `#/$defs/d${level + 1}` })) };
  defs[`d${levels}`] = { type: 'string' };
  return { type: 'object', $defs: defs, properties: { s: { $ref: '#/$defs/d0' } } };
}

describe('the cost of checking a server\'s schema', () => {
  it('accepts ordinary schemas, definitions used many times, and recursive types that move on to nested values', () => {
    expect(check({ type: 'object', properties: { path: { type: 'string' }, n: { type: 'integer', minimum: 0 } }, required: ['path'] })).not.toThrow();
    expect(check(fanout(3))).not.toThrow(); // 10^3: fine
    const tree = { $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } } } }, $ref: '#/$defs/node' };
    expect(check(tree)).not.toThrow();
    const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { a: { $id: '#a', type: 'string' } }, properties: { x: { $ref: '#a' }, y: { $ref: '#/definitions/a' } } };
    expect(check(draft07)).not.toThrow();
    expect(check({ $defs: { s: { $anchor: 'str', type: 'string' } }, properties: { x: { $ref: '#str' } } })).not.toThrow();
  });

  it('refuses $refs that fan out past the bound, before anything is compiled or run', () => {
    expect(check(fanout(8))).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID', message: expect.stringContaining('cost too much to check') }));
    // A recursion that doubles at each nested level: 2^64 along 64 levels of arguments.
    const doubling = { $defs: { n: { type: 'object', properties: { a: { $ref: '#/$defs/n' } }, allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }] } }, $ref: '#/$defs/n' };
    expect(check(doubling)).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
  });

  it('refuses a cycle that stays on the same value, and references it does not follow', () => {
    expect(check({ allOf: [{ $ref: '#' }] })).toThrow(expect.objectContaining({ message: expect.stringContaining('never moves on') }));
    expect(check({ $defs: { a: { $ref: '#/$defs/b' }, b: { anyOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' })).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    expect(check({ properties: { x: { $ref: 'other.json#/a' } } })).toThrow(expect.objectContaining({ message: expect.stringContaining('refers outside itself') }));
    expect(check({ properties: { x: { $ref: '#/$defs/missing' } } })).toThrow(expect.objectContaining({ message: expect.stringContaining('leads nowhere') }));
  });

  it('the compiler refuses a fan-out schema (before: it compiled, and checking {"s":"x"} ran 10^8 evaluations)', () => {
    expect(() => new SchemaCompiler().compile('bomb', fanout(8))).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    expect(new SchemaCompiler().compile('small', fanout(2))({ s: 'x' })).toBe(true);
  });
});
