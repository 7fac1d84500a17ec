import { describe, expect, it } from 'vitest';
import { TailFollower } from '../../../src/cli/commands/mcp-logs.js';
import { clientFile, serversOf } from '../../../src/cli/commands/mcp-import-from.js';
import { stripJsonComments } from '../../../src/core/jsonc.js';
import { keyValueArguments, typedValue, typesOf } from '../../../src/cli/commands/mcp-tool-args.js';
import { checkEntry } from '../../../src/cli/commands/mcp-add-json.js';

/** The pure parts of the issue-18 mcp commands: what the integration tests cannot reach (other OSes, edge cases). */

describe('mcp import --from: where each client keeps its file', () => {
  const mac = { platform: 'darwin' as const, home: '/Users/me', env: {} };
  const win = { platform: 'win32' as const, home: 'C:\\Users\\me', env: { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' } };
  const linux = { platform: 'linux' as const, home: '/home/me', env: {} };

  it('macOS, Windows and Linux paths', () => {
    expect(clientFile('claude-desktop', mac)).toBe('/Users/me/Library/Application Support/Claude/claude_desktop_config.json');
    expect(clientFile('vscode', mac)).toBe('/Users/me/Library/Application Support/Code/User/mcp.json');
    expect(clientFile('claude-desktop', win)).toMatch(/AppData.Roaming.Claude.claude_desktop_config\.json$/);
    expect(clientFile('vscode', win)).toMatch(/AppData.Roaming.Code.User.mcp\.json$/);
    expect(clientFile('claude-desktop', linux)).toBe('/home/me/.config/Claude/claude_desktop_config.json');
    expect(clientFile('vscode', { ...linux, env: { XDG_CONFIG_HOME: '/xdg' } })).toBe('/xdg/Code/User/mcp.json');
    expect(clientFile('vscode', { ...linux, env: { XDG_CONFIG_HOME: 'relative' } })).toBe('/home/me/.config/Code/User/mcp.json');
    for (const where of [mac, linux]) {
      expect(clientFile('claude-code', where)).toBe(`${where.home}/.claude.json`);
      expect(clientFile('cursor', where)).toBe(`${where.home}/.cursor/mcp.json`);
    }
  });

  it('claude-code: the local scope of this directory wins over the user scope', () => {
    const doc = { mcpServers: { a: { command: 'user' }, b: { command: 'user' } }, projects: { '/p': { mcpServers: { b: { command: 'local' } } } } };
    expect(serversOf('claude-code', doc, '/p')).toEqual({ a: { command: 'user' }, b: { command: 'local' } });
    expect(serversOf('claude-code', doc, '/q')).toEqual({ a: { command: 'user' }, b: { command: 'user' } });
    expect(serversOf('claude-code', { projects: {} }, '/p')).toBeUndefined();
    expect(serversOf('vscode', { mcp: { servers: { v: {} } } }, '/')).toEqual({ v: {} });
  });

  it('JSON with comments: comments outside strings and trailing commas go; strings stay whole', () => {
    const text = '{\n // a comment\n "url": "http://x//y", /* block */ "s": "a /* not */ b",\n "list": [1, 2,],\n}';
    expect(JSON.parse(stripJsonComments(text))).toEqual({ url: 'http://x//y', s: 'a /* not */ b', list: [1, 2] });
    expect(stripJsonComments('{"q": "say \\"//\\" ok"}')).toBe('{"q": "say \\"//\\" ok"}');
    // A comma before a closing bracket inside a string is text, not a trailing comma.
    expect(JSON.parse(stripJsonComments('{"args": ["a,]", "b ,}"], "x": [1, /* c */ ], }'))).toEqual({ args: ['a,]', 'b ,}'], x: [1] });
  });
});

describe('mcp call key=value', () => {
  it('reads the types of a property from type, anyOf/oneOf, enum and const', () => {
    expect([...typesOf({ type: ['integer', 'null'] })]).toEqual(['integer', 'null']);
    expect([...typesOf({ anyOf: [{ type: 'string' }, { type: 'boolean' }] })]).toEqual(['string', 'boolean']);
    expect([...typesOf({ enum: [1, 'a', null] })]).toEqual(['integer', 'string', 'null']);
    expect([...typesOf('not a schema')]).toEqual([]);
  });

  it('types a value, or refuses it', () => {
    expect(typedValue('n', '-1.5e3', new Set(['number']))).toBe(-1500);
    expect(typedValue('n', '12', new Set(['integer', 'string']))).toBe(12);
    expect(typedValue('n', '0x10', new Set(['integer', 'string']))).toBe('0x10');
    expect(typedValue('n', '9007199254740993', new Set(['integer', 'string']))).toBe('9007199254740993');
    expect(() => typedValue('n', '', new Set(['number']))).toThrow('n must be a number, not ""');
    expect(typedValue('x', '{"a":1}', new Set())).toEqual({ a: 1 });
    expect(typedValue('x', 'plain', new Set())).toBe('plain');
    expect(typedValue('x', '', new Set(['string']))).toBe('');
  });

  it('keeps a property named __proto__ as an own key', () => {
    const args = keyValueArguments({ name: 't', inputSchema: JSON.parse('{"properties": {"__proto__": {"type": "string"}}}') as Record<string, unknown> }, ['__proto__=x']);
    expect(Object.keys(args)).toEqual(['__proto__']);
    expect(JSON.stringify(args)).toBe('{"__proto__":"x"}');
  });
});

describe('mcp logs -f: what is new in each read', () => {
  it('complete lines once each; a partial line once it stopped changing; a restart starts again; a gap is counted', () => {
    const f = new TailFollower();
    expect(f.next({ stderr: 'a\nb', droppedChars: 0 })).toEqual({ text: 'a\n', missed: 0 });
    expect(f.next({ stderr: 'a\nb', droppedChars: 0 })).toEqual({ text: 'b', missed: 0 });
    expect(f.next({ stderr: 'a\nbc\n', droppedChars: 0 })).toEqual({ text: 'c\n', missed: 0 });
    expect(f.next({ stderr: 'c\nd\n', droppedChars: 3 })).toEqual({ text: 'd\n', missed: 0 });
    expect(f.next({ stderr: 'z\n', droppedChars: 20 })).toEqual({ text: 'z\n', missed: 13 });
    expect(f.next({ stderr: 'new\n', droppedChars: 0 })).toEqual({ text: 'new\n', missed: 0 });
  });
});

describe('mcp add-json: the entry checked', () => {
  it('accepts the two shapes and refuses the rest', () => {
    expect(checkEntry({ command: 'x', args: ['a'], env: { A: 'b' } })).toEqual({ command: 'x', args: ['a'], env: { A: 'b' } });
    expect(checkEntry({ url: 'https://x' })).toEqual({ url: 'https://x' });
    expect(() => checkEntry({ type: 'http', command: 'x', url: 'https://x' })).toThrow('an http entry has "url"');
    expect(() => checkEntry({ command: 'x', env: { A: 1 } })).toThrow('"env" must map names to strings');
    expect(() => checkEntry({ type: 'stdio', url: 'https://x' })).toThrow('a stdio entry has "command"');
    expect(() => checkEntry({})).toThrow('a stdio entry has "command"');
  });
});
