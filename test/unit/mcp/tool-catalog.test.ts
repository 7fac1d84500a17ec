import { describe, expect, it } from 'vitest';
import { modelToolName } from '../../../src/mcp/index.js';
import { SchemaCompiler } from '../../../src/mcp/tool-catalog.js';
import { StderrTail } from '../../../src/mcp/stderr-tail.js';

const id = '0b6f8c1e-2d3a-4f5b-9c7d-1e2f3a4b5c6d';

describe('modelToolName', () => {
  it('is stable, valid for model APIs and depends on service and tool', () => {
    const name = modelToolName(id, 'read file/ünïcode "quoted"');
    expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(name).toBe(modelToolName(id, 'read file/ünïcode "quoted"'));
    expect(name).toBe('mcp_0b6f8c1e2d3a_' + name.slice(-16));
    expect(modelToolName(id, 'other')).not.toBe(name);
    expect(modelToolName('ffffffff-2d3a-4f5b-9c7d-1e2f3a4b5c6d', 'read file/ünïcode "quoted"')).not.toBe(name);
  });
});

describe('SchemaCompiler', () => {
  const compiler = new SchemaCompiler();

  it('compiles 2020-12 by default, with its keywords enforced', () => {
    const validate = compiler.compile('t', { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }] } } });
    expect(validate({ p: ['ok'] })).toBe(true);
    expect(validate({ p: [1] })).toBe(false);
  });

  it('compiles draft-07 when $schema says so', () => {
    const validate = compiler.compile('t', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', dependencies: { a: ['b'] } });
    expect(validate({ a: 1 })).toBe(false);
    expect(validate({ a: 1, b: 2 })).toBe(true);
  });

  it('refuses external refs, unknown dialects, bad schemas and big ones, naming the tool', () => {
    expect(() => compiler.compile('remote', { type: 'object', properties: { a: { $ref: 'https://example.com/x.json' } } })).toThrow(
      expect.objectContaining({ code: 'SCHEMA_INVALID', message: expect.stringContaining('"remote"') }),
    );
    expect(() => compiler.compile('old', { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    expect(() => compiler.compile('bad', { type: 'nonsense' })).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    expect(() => compiler.compile('big', { type: 'object', description: 'x'.repeat(17 * 1024) })).toThrow(
      expect.objectContaining({ code: 'LIMIT_EXCEEDED', details: expect.objectContaining({ limit: 'maxInputSchemaBytes', tool: 'big' }) }),
    );
  });

  it('resolves local refs', () => {
    const validate = compiler.compile('local', { type: 'object', $defs: { n: { type: 'number' } }, properties: { a: { $ref: '#/$defs/n' } } });
    expect(validate({ a: 'no' })).toBe(false);
  });
});

describe('StderrTail', () => {
  it('keeps only the last characters and counts what it dropped', () => {
    const tail = new StderrTail(10);
    tail.push('0123456789');
    tail.push(Buffer.from('abcde'));
    expect(tail.snapshot()).toEqual({ text: '56789abcde', droppedChars: 5 });
    tail.push('x'.repeat(25));
    expect(tail.snapshot()).toEqual({ text: 'x'.repeat(10), droppedChars: 30 });
  });

  it('redacts what it hands out', () => {
    const tail = new StderrTail(100, (t) => t.replace('secret', '[REDACTED:K]'));
    tail.push('a secret here');
    expect(tail.snapshot().text).toBe('a [REDACTED:K] here');
  });
});
