import { describe, expect, it } from 'vitest';
import { PROFILE_NAME, SERVICE_NAME, claudeCodeCommandLine, clientConfigFile, editConfig, serveCommand, shellWord, snippet } from '../../../src/cli/client-config.js';
import { PROFILE_NAME_PATTERN, SERVICE_NAME_PATTERN, WispError } from '../../../src/core/index.js';

/** Where each MCP client keeps its servers, and how our entry goes into a file (issue 16). */

const mac = { platform: 'darwin' as const, env: {}, homedir: '/Users/me' };
const linux = { platform: 'linux' as const, env: {}, homedir: '/home/me' };

describe('client config files', () => {
  it('macOS: Claude Desktop and VS Code under Application Support; Cursor and Claude Code in the home directory', () => {
    expect(clientConfigFile('claude-desktop', mac)).toBe('/Users/me/Library/Application Support/Claude/claude_desktop_config.json');
    expect(clientConfigFile('vscode', mac)).toBe('/Users/me/Library/Application Support/Code/User/mcp.json');
    expect(clientConfigFile('cursor', mac)).toBe('/Users/me/.cursor/mcp.json');
    expect(clientConfigFile('claude-code', mac)).toBe('/Users/me/.claude.json');
  });

  it('Linux: ~/.config, or an absolute XDG_CONFIG_HOME; CLAUDE_CONFIG_DIR moves .claude.json', () => {
    expect(clientConfigFile('claude-desktop', linux)).toBe('/home/me/.config/Claude/claude_desktop_config.json');
    expect(clientConfigFile('vscode', { ...linux, env: { XDG_CONFIG_HOME: '/x/conf' } })).toBe('/x/conf/Code/User/mcp.json');
    expect(clientConfigFile('vscode', { ...linux, env: { XDG_CONFIG_HOME: 'relative' } })).toBe('/home/me/.config/Code/User/mcp.json');
    expect(clientConfigFile('claude-code', { ...linux, env: { CLAUDE_CONFIG_DIR: '/c' } })).toBe('/c/.claude.json');
  });
});

describe('the serve command and its snippets', () => {
  it('absolute node and wispctl, the global flags before mcp serve, --services checked', () => {
    const serve = serveCommand({ globalFlags: ['--socket', '/s/w.sock'], services: 'a, b.c', approveInClient: true }, '/n/node', '/p/bin/wispctl.js');
    expect(serve).toEqual({ command: '/n/node', args: ['/p/bin/wispctl.js', '--socket', '/s/w.sock', 'mcp', 'serve', '--services', 'a,b.c', '--approve-in-client'] });
    expect(serveCommand({ globalFlags: ['--socket', '/s'], deferTools: true }, '/n/node', '/p/w.js').args).toEqual(['/p/w.js', '--socket', '/s', 'mcp', 'serve', '--defer-tools']);
    expect(() => serveCommand({ globalFlags: [], services: 'a;rm -rf' })).toThrow(WispError);
    expect(SERVICE_NAME.source).toBe(SERVICE_NAME_PATTERN);
  });

  it('--profile NAME: checked, alone, and the entry named wisp-NAME', () => {
    const serve = serveCommand({ globalFlags: ['--socket', '/s'], profile: 'work' }, '/n/node', '/p/w.js');
    expect(serve).toEqual({ command: '/n/node', args: ['/p/w.js', '--socket', '/s', 'mcp', 'serve', '--profile', 'work'], name: 'wisp-work' });
    expect(snippet('cursor', serve)).toEqual({ mcpServers: { 'wisp-work': { command: '/n/node', args: serve.args } } });
    expect(claudeCodeCommandLine(serve)).toBe('claude mcp add --scope user wisp-work -- /n/node /p/w.js --socket /s mcp serve --profile work');
    for (const bad of ['', 'a.b', 'x;y', '-a', 'a'.repeat(33)]) expect(() => serveCommand({ globalFlags: [], profile: bad }), bad).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }) as Error);
    expect(() => serveCommand({ globalFlags: [], profile: 'work', services: 'a' })).toThrow(expect.objectContaining({ code: 'INVALID_PARAMS' }) as Error);
    expect(PROFILE_NAME.source).toBe(PROFILE_NAME_PATTERN);
  });

  it('the claude mcp add line quotes what a shell would split', () => {
    expect(shellWord("it's here")).toBe(`'it'\\''s here'`);
    expect(claudeCodeCommandLine({ command: '/Applications/My Node/node', args: ['/p/wispctl.js', 'mcp', 'serve'] })).toBe(
      "claude mcp add --scope user wisp -- '/Applications/My Node/node' /p/wispctl.js mcp serve",
    );
  });
});

describe('editConfig', () => {
  const entry = { command: '/n', args: ['x'] };

  it('keeps every other key in order, the indentation and the absence of a final newline', () => {
    const edit = editConfig('cursor', 'f', '{\n    "a": 1,\n    "mcpServers": {"o": {}},\n    "z": 2\n}', entry);
    expect(edit.replaced).toBeUndefined();
    expect(edit.text).toBe('{\n    "a": 1,\n    "mcpServers": {\n        "o": {},\n        "wisp": {\n            "command": "/n",\n            "args": [\n                "x"\n            ]\n        }\n    },\n    "z": 2\n}');
  });

  it('an empty file is a new one; an existing entry is returned as replaced', () => {
    expect(JSON.parse(editConfig('vscode', 'f', '  \n', entry).text)).toEqual({ servers: { wisp: entry } });
    const edit = editConfig('claude-desktop', 'f', '{"mcpServers": {"wisp": {"command": "old"}}}', entry);
    expect(edit.replaced).toEqual({ command: 'old' });
    expect(JSON.parse(edit.text)).toEqual({ mcpServers: { wisp: entry } });
  });

  it('a profile\'s entry goes beside the plain one, under its own name', () => {
    const edit = editConfig('claude-desktop', 'f', '{"mcpServers": {"wisp": {"command": "old"}}}', entry, 'wisp-work');
    expect(edit.replaced).toBeUndefined();
    expect(JSON.parse(edit.text)).toEqual({ mcpServers: { wisp: { command: 'old' }, 'wisp-work': entry } });
  });

  it('refuses what is not a JSON object with an object server list', () => {
    for (const text of ['{"a": 1,}', 'null', '"x"', '{"mcpServers": null}', '{"mcpServers": [1]}']) {
      expect(() => editConfig('claude-code', 'f', text, entry), text).toThrow(expect.objectContaining({ code: 'CLIENT_CONFIG_INVALID' }) as Error);
    }
  });
});
