import { describe, expect, it } from 'vitest';
import { expand, expandLaunch, mergeSources, type SourceFile } from '../../../src/mcp/index.js';

const global = (json: unknown): SourceFile => ({ kind: 'global', file: '/cfg/settings.json', content: { json } });
const plugin = (name: string, json: unknown): SourceFile => ({ kind: 'plugin', file: `/cfg/plugins/${name}/plugin.json`, plugin: name, directory: `/cfg/plugins/${name}`, content: { json } });
const project = (dir: string, json: unknown): SourceFile => ({ kind: 'project', file: `${dir}/.mcp.json`, directory: dir, content: { json } });
const env = { TOKEN: 'tok-123', EMPTY: '', HOST: 'example.com' };

describe('${VAR} expansion', () => {
  it.each([
    ['${TOKEN}', 'tok-123', []],
    ['${env:TOKEN} (VS Code\'s form)', 'tok-123 (VS Code\'s form)', []],
    ['Bearer ${TOKEN}!', 'Bearer tok-123!', []],
    ['${MISSING}', '', ['MISSING']],
    ['${MISSING:-fallback}', 'fallback', []],
    ['${EMPTY:-fallback}', 'fallback', []],
    ['${EMPTY}', '', []],
    ['${TOKEN:-fallback}', 'tok-123', []],
    ['$TOKEN and ${ not a var }', '$TOKEN and ${ not a var }', []],
    ['https://${HOST}/mcp', 'https://example.com/mcp', []],
  ])('%s -> %s', (text, expected, unset) => {
    const seen: string[] = [];
    expect(expand(text, env, (name) => seen.push(name))).toBe(expected);
    expect(seen).toEqual(unset);
  });
});

describe('merging config sources', () => {
  it('reads mcpServers at the top level or under config in the global file', () => {
    const top = mergeSources([global({ mcpServers: { a: { command: 'a-bin' } } })], env);
    const nested = mergeSources([global({ config: { mcpServers: { b: { command: 'b-bin' } } } })], env);
    expect(top.entries.map((e) => e.name)).toEqual(['a']);
    expect(nested.entries.map((e) => e.name)).toEqual(['b']);
  });

  it('picks the transport: command -> stdio, url -> http, both -> stdio with a warning, neither -> invalid with file and name', () => {
    const result = mergeSources(
      [
        global({
          mcpServers: {
            local: { command: 'srv', args: ['--x'], env: { K: 'v' } },
            remote: { url: 'https://example.com/mcp', headers: { Authorization: 'Bearer ${TOKEN}' }, oauth: { enabled: true } },
            both: { command: 'srv', url: 'https://example.com/mcp' },
            neither: { args: ['x'] },
          },
        }),
      ],
      env,
    );
    const byName = Object.fromEntries(result.entries.map((e) => [e.name, e]));
    expect(byName.local).toMatchObject({ transport: 'stdio', command: 'srv', args: ['--x'], env: { K: 'v' }, url: null });
    expect(byName.remote).toMatchObject({ transport: 'http', url: 'https://example.com/mcp', headers: {}, headerTemplates: { Authorization: 'Bearer ${TOKEN}' }, oauth: { enabled: true, clientId: null } });
    expect(byName.both).toMatchObject({ transport: 'stdio', url: null });
    expect(byName.both?.warnings.join()).toContain('both command and url');
    expect(result.skipped).toEqual([{ name: 'neither', origin: { source: 'global', file: '/cfg/settings.json', plugin: null }, reason: expect.stringContaining('neither command') }]);
  });

  it('keeps every template as written (command, args, url, and env and header values with a ${VAR}), naming the variables; literal values are the secrets; warns about each unset variable', () => {
    const result = mergeSources(
      [
        global({
          mcpServers: {
            s: { command: '${HOST}-bin', args: ['--token=${TOKEN}', '${NOPE1}'], env: { A: '${TOKEN}', B: '${NOPE2:-d}', C: 'literal-value' } },
            r: { url: 'https://${HOST}/mcp', headers: { X: '${NOPE3}', Y: 'Bearer literal' } },
          },
        }),
      ],
      env,
    );
    const [s, r] = result.entries;
    expect(s).toMatchObject({ command: '${HOST}-bin', args: ['--token=${TOKEN}', '${NOPE1}'], fromEnvironment: ['HOST', 'NOPE1', 'TOKEN'], env: { C: 'literal-value' }, envTemplates: { A: '${TOKEN}', B: '${NOPE2:-d}' } });
    expect(JSON.stringify(result)).not.toContain('tok-123');
    expect(s?.warnings).toEqual(['${NOPE1} is not set (entry "s" in /cfg/settings.json): it became an empty string']);
    expect(r).toMatchObject({ url: 'https://${HOST}/mcp', fromEnvironment: ['HOST'], headers: { Y: 'Bearer literal' }, headerTemplates: { X: '${NOPE3}' } });
    expect(r?.warnings).toEqual(['${NOPE3} is not set (entry "r" in /cfg/settings.json): it became an empty string']);
  });

  it('fills the templates in at launch, command, args and url for the names the config lists only; only secret variables are handed back for the redactor', () => {
    const vars = { ...env, HOME: '/home/someone' };
    const launched = expandLaunch(
      { command: '${HOST}-bin', args: ['--token=${TOKEN}', '${HOME}/docs', ''], fromEnvironment: ['HOST', 'HOME', 'TOKEN'], envTemplates: [{ name: 'A', template: '${TOKEN}' }, { name: 'D', template: '${HOME}' }] },
      vars,
    );
    expect(launched.config).toMatchObject({ command: 'example.com-bin', args: ['--token=tok-123', '/home/someone/docs', ''] });
    expect(launched.env).toEqual({ A: 'tok-123', D: '/home/someone' });
    // HOME is public: its value is no secret (the server gets HOME anyway), so it never joins the redactor.
    expect(launched.secrets).toEqual(expect.arrayContaining([{ name: 'TOKEN', value: 'tok-123' }, { name: 'HOST', value: 'example.com' }]));
    expect(launched.secrets.map((v) => v.name)).not.toContain('HOME');
    expect(expandLaunch({ command: 'x', args: ['${TOKEN}'], fromEnvironment: [] }, env).config.args).toEqual(['${TOKEN}']);
    expect(expandLaunch({ command: 'x', args: ['${TOKEN} ${HOST}'], fromEnvironment: ['HOST'] }, env).config.args).toEqual(['${TOKEN} example.com']);
    expect(expandLaunch({ command: 'x', args: [], headerTemplates: [{ name: 'Authorization', template: 'Bearer ${TOKEN}' }] }, env).headers).toEqual({ Authorization: 'Bearer tok-123' });
  });

  it.each([
    ['args', { command: 'x', args: ['--k=${DEEPSEEK_API_KEY}'], fromEnvironment: ['DEEPSEEK_API_KEY'] }],
    ['an env template', { command: 'x', args: [], envTemplates: [{ name: 'LOG_TOKEN', template: '${DEEPSEEK_API_KEY}' }] }],
    ['a header template', { command: '', args: [], url: 'https://x.example/', headerTemplates: [{ name: 'X-Trace', template: '${WISP_SOCKET}' }] }],
  ])('refuses a launch whose %s reads a variable of the daemon\'s own (ENV_NOT_ALLOWED), whatever the registry says', (_what, config) => {
    expect(() => expandLaunch(config, { DEEPSEEK_API_KEY: 'sk-model-key', WISP_SOCKET: '/run/wisp.sock' })).toThrow(expect.objectContaining({ code: 'ENV_NOT_ALLOWED' }));
  });

  it('lets a project entry replace a global one of the same name whole, with no field merge', () => {
    const result = mergeSources(
      [global({ mcpServers: { shared: { command: 'global-bin', args: ['--g'], env: { G: '1' } } } }), project('/p', { mcpServers: { shared: { command: 'project-bin' } } })],
      env,
    );
    expect(result.entries).toHaveLength(1);
    expect(result.entries[0]).toMatchObject({ name: 'shared', command: 'project-bin', args: [], env: {}, cwd: '/p', origin: { source: 'project', file: '/p/.mcp.json' } });
    expect(result.entries[0]?.overrides).toEqual({ source: 'global', file: '/cfg/settings.json', plugin: null });
    expect(result.skipped).toEqual([{ name: 'shared', origin: { source: 'global', file: '/cfg/settings.json', plugin: null }, reason: expect.stringContaining('replaced whole') }]);
  });

  it('namespaces plugin servers, so a project entry with the short name does not replace them', () => {
    const result = mergeSources([plugin('tools', { mcpServers: { fetch: { command: 'plugin-fetch' } } }), project('/p', { mcpServers: { fetch: { command: 'project-fetch' } } })], env);
    expect(result.entries.map((e) => [e.name, e.command, e.origin.source])).toEqual([
      ['tools.fetch', 'plugin-fetch', 'plugin'],
      ['fetch', 'project-fetch', 'project'],
    ]);
    expect(result.entries[0]?.cwd).toBe('/cfg/plugins/tools');
  });

  it('drops a plugin entry whose content equals a manual one', () => {
    const same = { command: 'srv', args: ['--a'], env: { K: 'v-123' } };
    const result = mergeSources([global({ mcpServers: { mine: same } }), plugin('dup', { mcpServers: { theirs: { command: 'srv', args: ['--a'], env: { K: 'v-123' } } } })], env);
    expect(result.entries.map((e) => e.name)).toEqual(['mine']);
    expect(result.skipped).toEqual([{ name: 'dup.theirs', origin: expect.objectContaining({ source: 'plugin', plugin: 'dup' }), reason: expect.stringContaining('same content as "mine"') }]);
  });

  it('keeps the merge order global -> plugin -> project in what it reports', () => {
    const result = mergeSources([global({ mcpServers: { g: { command: 'g' } } }), plugin('p', { mcpServers: { x: { command: 'x' } } }), project('/p', { mcpServers: { j: { command: 'j' } } })], env);
    expect(result.entries.map((e) => e.origin.source)).toEqual(['global', 'plugin', 'project']);
  });

  it.each([
    ['a non-object entry', 'x', 'not an object'],
    ['an empty command', { command: '' }, 'non-empty string'],
    ['args that are not strings', { command: 'c', args: [1] }, 'args must be'],
    ['an env that is not a string map', { command: 'c', env: { A: 1 } }, 'env must map'],
    ['a bad variable name', { command: 'c', env: { 'A-B': 'x' } }, 'invalid variable name'],
    ['a bad header name', { url: 'https://x.example', headers: { 'Bad Header': 'x' } }, 'invalid header name'],
    ['a url that is not http', { url: 'ftp://x.example' }, 'is not an http(s) URL'],
    ['a bad oauth', { url: 'https://x.example', oauth: 'yes' }, 'oauth must be an object'],
    ['a command empty after expansion', { command: '${TMPDIR}' }, 'empty after'],
  ])('reports %s as invalid, with the reason', (_what, entry, reason) => {
    const result = mergeSources([project('/p', { mcpServers: { bad: entry } })], env);
    expect(result.entries).toEqual([]);
    expect(result.skipped[0]).toMatchObject({ name: 'bad', origin: { file: '/p/.mcp.json' }, reason: expect.stringContaining(reason) });
  });

  it('refuses names the registry cannot hold', () => {
    const result = mergeSources([global({ mcpServers: { 'has space': { command: 'c' }, '-lead': { command: 'c' } } })], env);
    expect(result.entries).toEqual([]);
    expect(result.skipped.map((s) => s.reason)).toEqual([expect.stringContaining('not a valid service name'), expect.stringContaining('not a valid service name')]);
  });

  it('reports a whole file that cannot be used, and goes on with the others', () => {
    const result = mergeSources(
      [
        { kind: 'project', file: '/broken/.mcp.json', directory: '/broken', content: { error: 'is not valid JSON: Unexpected token', unusable: 'INVALID_CONFIG' } },
        { kind: 'project', file: '/gone/.mcp.json', directory: '/gone', content: { error: 'there is no .mcp.json in /gone', absent: true } },
        global({ mcpServers: 3 }),
        project('/ok', { mcpServers: { fine: { command: 'c' } } }),
      ],
      env,
    );
    // A file that is there but unusable has a code (its services are kept); a missing one has none.
    expect(result.problems).toEqual([
      { file: '/broken/.mcp.json', message: 'is not valid JSON: Unexpected token', code: 'INVALID_CONFIG' },
      { file: '/gone/.mcp.json', message: 'there is no .mcp.json in /gone' },
      { file: '/cfg/settings.json', message: 'mcpServers is not an object', code: 'INVALID_CONFIG' },
    ]);
    expect(result.entries.map((e) => e.name)).toEqual(['fine']);
  });

  it('gives the same digest for the same content, a new one for any change, and keeps secret values out of it', () => {
    const digest = (entry: unknown, vars = env): string => mergeSources([global({ mcpServers: { s: entry } })], vars).entries[0]?.digest ?? '';
    const base = { command: 'c', args: ['a'], env: { K: '${TOKEN}' } };
    expect(digest(base)).toBe(digest({ ...base }));
    expect(digest({ ...base, args: ['b'] })).not.toBe(digest(base));
    expect(digest({ ...base, env: { K2: '${TOKEN}' } })).not.toBe(digest(base));
    // The value is a secret: it is compared in memory, never hashed into the registry.
    expect(digest(base, { ...env, TOKEN: 'other' })).toBe(digest(base));
  });
});

describe('an entry\'s transport', () => {
  it('keeps "type": "sse" (legacy HTTP+SSE), reads http/streamable-http as streamable HTTP, and refuses what it cannot run', () => {
    const merged = mergeSources(
      [
        global({
          mcpServers: {
            legacy: { type: 'sse', url: 'https://example.com/sse', headers: { Authorization: 'Bearer ${TOKEN}' } },
            modern: { type: 'streamable-http', url: 'https://example.com/mcp' },
            plain: { url: 'https://example.com/mcp2' },
            local: { type: 'stdio', command: 'x-bin' },
            socket: { type: 'websocket', url: 'wss://example.com/' },
            mixed: { type: 'sse', command: 'x-bin' },
            nourl: { type: 'stdio', url: 'https://example.com/mcp' },
          },
        }),
      ],
      env,
    );
    expect(merged.entries.map((e) => [e.name, e.transport, e.url])).toEqual([
      ['legacy', 'sse', 'https://example.com/sse'],
      ['modern', 'http', 'https://example.com/mcp'],
      ['plain', 'http', 'https://example.com/mcp2'],
      ['local', 'stdio', null],
    ]);
    expect(merged.entries[0]?.headerTemplates).toEqual({ Authorization: 'Bearer ${TOKEN}' });
    expect(merged.skipped.map((s) => [s.name, s.reason])).toEqual([
      ['socket', 'invalid: type "websocket" is not one of stdio, http, sse'],
      ['mixed', 'invalid: type is "sse" but the entry has a command (a remote entry has a url)'],
      ['nourl', 'invalid: type is "stdio" but the entry has no command'],
    ]);
  });

  it('changes the digest when only the type changes (a synced service is re-registered)', () => {
    const a = mergeSources([global({ mcpServers: { s: { type: 'sse', url: 'https://example.com/x' } } })], env).entries[0];
    const b = mergeSources([global({ mcpServers: { s: { type: 'http', url: 'https://example.com/x' } } })], env).entries[0];
    expect(a?.digest).not.toBe(b?.digest);
  });
});

describe('which ${VAR}s a file may read', () => {
  const fields = (name: string): Record<string, unknown>[] => [
    { command: 'srv', args: [`--k=\${${name}}`] },
    { command: 'srv', env: { LOG_TOKEN: `\${${name}}` } },
    { url: `https://x.example/\${${name}}` },
    { url: 'https://x.example/mcp', headers: { 'X-Trace': `\${${name}}` } },
  ];

  it.each(['DEEPSEEK_API_KEY', 'DEEPSEEK_BASE_URL', 'WISP_HOME'])('never the daemon\'s own %s, in any field of any file (ENV_NOT_ALLOWED)', (name) => {
    for (const entry of fields(name)) {
      for (const file of [global({ mcpServers: { s: entry } }), project('/p', { mcpServers: { s: entry } })]) {
        const result = mergeSources([{ ...file, allowEnv: [name] }], { [name]: 'sk-daemon-own' });
        expect(result.entries).toEqual([]);
        expect(result.skipped).toEqual([expect.objectContaining({ name: 's', code: 'ENV_NOT_ALLOWED', reason: expect.stringMatching(new RegExp(`^ENV_NOT_ALLOWED: \\$\\{${name}\\} \\(in (args\\[0\\]|env\\.LOG_TOKEN|url|headers\\.X-Trace)\\) is the daemon's own`)) })]);
      }
    }
  });

  it('lets a project read the public variables, and another one only once the user named it for that project', () => {
    for (const entry of fields('GITHUB_TOKEN')) {
      const refused = mergeSources([project('/p', { mcpServers: { s: entry } })], { GITHUB_TOKEN: 'ghp-1234567' });
      expect(refused.entries).toEqual([]);
      expect(refused.skipped[0]).toMatchObject({ code: 'ENV_NOT_ALLOWED', reason: expect.stringContaining('wispctl mcp sources add-project /p --allow-env GITHUB_TOKEN') });
      const named = mergeSources([{ ...project('/p', { mcpServers: { s: entry } }), allowEnv: ['GITHUB_TOKEN'] }], { GITHUB_TOKEN: 'ghp-1234567' });
      expect(named.entries.map((e) => e.name)).toEqual(['s']);
      // Named for another project, it is still not read here.
      const other = mergeSources([{ ...project('/p', { mcpServers: { s: entry } }), allowEnv: ['OTHER'] }], { GITHUB_TOKEN: 'ghp-1234567' });
      expect(other.entries).toEqual([]);
    }
    const open = mergeSources([project('/p', { mcpServers: { s: { command: 'srv', args: ['${HOME}/docs', '${USER}'], env: { HOME_DIR: '${HOME}', T: '${TMPDIR:-/tmp}' } } } })], { HOME: '/home/u' });
    expect(open.entries.map((e) => e.name)).toEqual(['s']);
  });

  it('lets a plugin read the public variables only, and the user\'s own settings.json any but the daemon\'s', () => {
    const entry = { command: 'srv', args: ['${HOME}', '${GITHUB_TOKEN}'] };
    const fromPlugin = mergeSources([plugin('tools', { mcpServers: { s: entry } })], {});
    expect(fromPlugin.skipped[0]).toMatchObject({ code: 'ENV_NOT_ALLOWED', reason: expect.stringContaining('put the entry in your own settings.json') });
    expect(mergeSources([plugin('tools', { mcpServers: { s: { command: 'srv', args: ['${HOME}'] } } })], {}).entries).toHaveLength(1);
    expect(mergeSources([global({ mcpServers: { s: entry } })], {}).entries).toHaveLength(1);
  });
});
