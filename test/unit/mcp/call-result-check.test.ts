import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checks } from '#generated/call-result-check.js';

/**
 * The daemon reads a tool's answer only after its own check (CallChannel): it must accept
 * exactly what the SDK's client accepts. Two documented differences are kept out of the
 * values: base64 data is not decoded (the SDK tries atob), and lastModified is not parsed as
 * a date-time; both are strings we never read.
 */
const base64 = fc.constantFrom('', 'aGVsbG8=', 'AAAA');
const wrong = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }));

/** A field that is mostly right, sometimes missing, sometimes of another type. */
function field<T>(right: fc.Arbitrary<T>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 6, arbitrary: right }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: wrong });
}

const annotations = fc.record(
  {
    audience: field(fc.array(fc.constantFrom('user', 'assistant', 'robot'), { maxLength: 2 })),
    priority: field(fc.constantFrom(0, 0.5, 1, 1.5, -1)),
    lastModified: fc.constant('2026-01-01T00:00:00Z'),
  },
  { requiredKeys: [] },
);

const resource = fc.oneof(
  fc.record({ uri: field(fc.string()), mimeType: field(fc.string()), text: field(fc.string()) }, { requiredKeys: [] }),
  fc.record({ uri: field(fc.string()), blob: field(base64), _meta: field(fc.dictionary(fc.string(), fc.string())) }, { requiredKeys: [] }),
);

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: field(fc.string()), annotations: field(annotations) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('image', 'audio'), data: field(base64), mimeType: field(fc.string()), _meta: field(fc.dictionary(fc.string(), fc.string())) }, { requiredKeys: ['type'] }),
  fc.record(
    {
      type: fc.constant('resource_link'),
      uri: field(fc.string()),
      name: field(fc.string()),
      size: field(fc.nat()),
      icons: field(fc.array(fc.record({ src: field(fc.string()), sizes: field(fc.array(fc.string(), { maxLength: 2 })) }, { requiredKeys: [] }), { maxLength: 2 })),
    },
    { requiredKeys: ['type'] },
  ),
  fc.record({ type: fc.constant('resource'), resource: field(resource) }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constantFrom('video', 'TEXT'), text: fc.string() }),
  wrong,
);

const result = fc.record(
  {
    content: field(fc.array(block, { maxLength: 3 })),
    structuredContent: field(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })),
    isError: field(fc.boolean()),
    _meta: field(fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 })),
    extra: fc.jsonValue({ maxDepth: 1 }),
  },
  { requiredKeys: [] },
);

/** As JSON: an undefined property is no property on the wire. */
const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

describe('the check of a tool result', () => {
  it('accepts exactly what the SDK accepts', () => {
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(result, (generated) => {
        const value = wire(generated);
        const ours = checks.callResult(value);
        expect(ours).toBe(CallToolResultSchema.safeParse(value).success);
        if (ours) accepted += 1;
        else refused += 1;
      }),
      { numRuns: 2000 },
    );
    // Both sides of the line were tried, not one.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it('refuses what is not an object', () => {
    for (const value of [null, [], 'text', 42, true]) expect(checks.callResult(value)).toBe(false);
  });
});
