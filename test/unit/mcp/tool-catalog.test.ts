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

  it('runs server patterns in linear time: the ReDoS pattern answers at once', () => {
    const validate = compiler.compile('redos', { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
    const started = performance.now();
    expect(validate({ s: `${'a'.repeat(64)}!` })).toBe(false);
    expect(validate({ s: 'a'.repeat(64) })).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
    const props = compiler.compile('props', { type: 'object', patternProperties: { '^(a+)+$': { type: 'number' } } });
    expect(props({ [`${'a'.repeat(64)}!`]: 'x' })).toBe(true);
    expect(props({ aaaa: 'x' })).toBe(false);
  });

  it('keeps distinct patterns of one schema apart', () => {
    const validate = compiler.compile('two', { type: 'object', properties: { a: { type: 'string', pattern: '^a$' }, b: { type: 'string', pattern: '^b$' } } });
    expect(validate({ a: 'a', b: 'b' })).toBe(true);
    expect(validate({ a: 'b', b: 'a' })).toBe(false);
  });

  it('keeps ECMAScript meaning for escapes, classes, anchors and unicode', () => {
    const t = (pattern: string, s: string): boolean => compiler.compile('t', { type: 'string', pattern })(s);
    expect(t('^\\u00e9$', 'é')).toBe(true);
    expect(t('^\\d{3}-\\d{4}$', '555-1234')).toBe(true);
    expect(t('^\\d{3}$', '５５５')).toBe(false);
    expect(t('^[\\w.-]+@[\\w.-]+$', 'a.b@c-d.e')).toBe(true);
    expect(t('a/b', 'xa/by')).toBe(true);
    expect(t('^.$', '😀')).toBe(true);
    expect(t('^\\p{L}+$', 'ünï')).toBe(true);
    expect(t('^(?<year>\\d{4})$', '2024')).toBe(true);
    expect(t('abc$', 'abc\n')).toBe(false);
  });

  it('refuses patterns that cannot run in linear time or mean something else in RE2: SCHEMA_INVALID, never a fallback', () => {
    for (const pattern of ['(a)\\1', '(?<n>a)\\k<n>', '(?=a)', '(?!a)b', '(?<=a)b', '(?<!a)b', '[[:alpha:]]', '(?i)abc', '\\Z', '(', 'a{2000}', '(?:.{0,1000}){0,1}.{0,1000}.{0,1000}']) {
      expect(() => compiler.compile('re', { type: 'string', pattern }), pattern).toThrow(
        expect.objectContaining({ code: 'SCHEMA_INVALID', message: expect.stringContaining('"re"') }),
      );
      expect(() => compiler.compile('re', { type: 'object', patternProperties: { [pattern]: {} } }), pattern).toThrow(expect.objectContaining({ code: 'SCHEMA_INVALID' }));
    }
  });

  it('bounds the regexp work of one validation: many patterns on one long string are refused, not run for seconds', () => {
    const allOf = Array.from({ length: 200 }, () => ({ pattern: '\\p{L}{0,1000}\\d' }));
    const validate = compiler.compile('costly', { type: 'string', allOf });
    const started = performance.now();
    expect(validate('a'.repeat(30_000))).toBe(false);
    expect(validate.errors?.[0]?.message).toMatch(/cost more than/);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(validate('a1')).toBe(true);
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
