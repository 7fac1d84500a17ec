import { describe, expect, it } from 'vitest';
import type { ToolInfo } from '../../../src/core/index.js';
import { MCP_TOOL_NAME, offeredNames } from '../../../src/gateway/names.js';

let n = 0;
function tool(serviceName: string, name: string): ToolInfo {
  n += 1;
  const id = n.toString(16).padStart(12, '0');
  return {
    serviceId: `${id}-0000`, serviceName, name, modelName: `mcp_${id}_${'0'.repeat(15)}${n % 10}`, title: null, description: '', inputSchema: {}, annotations: null,
    outputSchema: null, icons: [], meta: null, generation: 1, toolListVersion: 1, pin: 'trusted', unavailable: null,
  };
}

describe('offeredNames', () => {
  it('gives SERVICE__TOOL, as it is when valid', () => {
    const tools = [tool('files', 'read_file'), tool('files', 'list.dir'), tool('web-1', 'fetch-url')];
    expect([...offeredNames(tools, false).values()]).toEqual(['files__read_file', 'files__list.dir', 'web-1__fetch-url']);
  });

  it('cleans a name that is not valid and adds a digest, so names that clean alike stay apart; 128 characters at most', () => {
    const tools = [tool('s', 'say hello!'), tool('s', 'say hello?'), tool('s', ''), tool('s', `x${'é'.repeat(200)}`), tool(`a${'b'.repeat(63)}`, 'c'.repeat(100))];
    const names = [...offeredNames(tools, false).values()];
    expect(names[0]).toMatch(/^s__say_hello__[0-9a-f]{8}$/);
    expect(names[1]).toMatch(/^s__say_hello__[0-9a-f]{8}$/);
    expect(names[0]).not.toBe(names[1]);
    expect(names[2]).toMatch(/^s___[0-9a-f]{8}$/);
    for (const name of names) expect(name).toMatch(MCP_TOOL_NAME);
    expect(names[4]).toHaveLength(128);
    // The same tools, again (a restart): the same names.
    expect([...offeredNames(tools.map((t) => ({ ...t })), false).values()]).toEqual(names);
  });

  it('gives a name two tools would share to neither: both keep their model-facing names', () => {
    const left = tool('a', 'b__c');
    const right = tool('a__b', 'c');
    const other = tool('a', 'd');
    const names = offeredNames([left, right, other], false);
    expect(names.get(left)).toBe(left.modelName);
    expect(names.get(right)).toBe(right.modelName);
    expect(names.get(other)).toBe('a__d');
    expect(new Set(names.values()).size).toBe(3);
  });

  it('with own names: the tools\' own names, cleaned when invalid; one that clashes, or is a model-facing name, falls back', () => {
    const plain = tool('s', 'echo');
    const odd = tool('s', 'a b');
    const twin = tool('s', 'x');
    const mimic = tool('s', twin.modelName);
    const names = offeredNames([plain, odd, twin, mimic], true);
    expect(names.get(plain)).toBe('echo');
    expect(names.get(odd)).toMatch(/^a_b_[0-9a-f]{8}$/);
    expect(names.get(twin)).toBe('x');
    expect(names.get(mimic)).toBe(mimic.modelName);
    expect(new Set(names.values()).size).toBe(4);
  });
});
