import { describe, expect, it } from 'vitest';
import { WispError } from '../../../src/core/index.js';
import { HOST_TOOLS, hostTool, type HostActions, type HostApproval, type HostTool } from '../../../src/sessions/host-tools.js';

/** The daemon's side, as plain functions that record what they were asked to do. */
function host(options: { deny?: boolean; command?: string; args?: string[] } = {}): { actions: HostActions; asked: HostApproval[]; done: string[]; call: (tool: HostTool, args: Record<string, unknown>) => Promise<unknown> } {
  const asked: HostApproval[] = [];
  const done: string[] = [];
  const shown = { id: 'svc-1', name: 'files', command: options.command ?? '/usr/bin/files', args: options.args ?? [], cwd: null, env: [], transport: 'stdio', url: null, headers: [], templates: {}, fromEnvironment: [], sandbox: { status: 'on' as const, read: [], write: [], net: { mode: 'none' as const } }, media: false, configVersion: 3 };
  const actions: HostActions = {
    listServices: () => [{ id: 'svc-1', name: 'files' }],
    describe: (ref) => {
      done.push(`describe ${JSON.stringify(ref)}`);
      return shown;
    },
    sandboxSees: () => Promise.resolve(['read-only /usr (system)', 'network: none']),
    register: (input) => {
      done.push(`register ${JSON.stringify(input)}`);
      return Promise.resolve({ id: 'svc-2', name: input.name, configVersion: 1 });
    },
    activate: (id, configVersion) => {
      done.push(`activate ${id}@${configVersion}`);
      return Promise.resolve({ status: 'disabled', since: '2026-01-01T00:00:00.000Z' });
    },
    planInstall: (input) => {
      done.push(`plan ${JSON.stringify(input)}`);
      return Promise.resolve({ digest: 'd1', title: 'Install it', shown: { package: input.package } });
    },
    install: (digest) => {
      done.push(`install ${digest}`);
      return Promise.resolve({ service: { id: 'svc-3', name: 'hello' }, lockedPackages: 1, installScriptsNotRun: [], reused: false });
    },
  };
  const ask = (approval: HostApproval): Promise<void> => {
    asked.push(approval);
    return options.deny === true ? Promise.reject(new WispError('APPROVAL_DENIED', 'denied by client-2')) : Promise.resolve();
  };
  const call = async (tool: HostTool, args: Record<string, unknown>): Promise<unknown> => JSON.parse(await tool.call(args, { actions, ask, signal: new AbortController().signal }));
  return { actions, asked, done, call };
}

function tool(name: string): HostTool {
  const found = hostTool(name);
  if (found === undefined) throw new Error(`no host tool ${name}`);
  return found;
}

const GOOD: Record<string, Record<string, unknown>> = {
  mcp_list_services: {},
  mcp_register: { name: 'made', command: '/usr/bin/made', args: ['--x'], cwd: '/tmp' },
  mcp_install_npm: { package: 'hello-mcp', version: '1.0.0', bin: 'hello-mcp', args: ['--y'] },
  mcp_activate_service: { name: 'files' },
};

describe('host tools', () => {
  it('offers the four host tools, each with an object schema as its parameters', () => {
    expect(HOST_TOOLS.map((t) => t.definition.function.name)).toEqual(['mcp_list_services', 'mcp_register', 'mcp_install_npm', 'mcp_activate_service']);
    for (const t of HOST_TOOLS) expect(t.definition.function.parameters).toMatchObject({ type: 'object', properties: expect.any(Object) });
  });

  it('refuses, before any approval, every argument the offered parameters rule out: each required property missing, each property of the wrong type', async () => {
    for (const t of HOST_TOOLS) {
      const { properties, required = [] } = t.definition.function.parameters as { properties: Record<string, { type: string }>; required?: string[] };
      const good = GOOD[t.name] ?? {};
      for (const name of required) {
        const { [name]: _dropped, ...without } = good;
        const { asked, done, call } = host();
        expect(await call(t, without)).toEqual({
          error: { code: 'INVALID_ARGUMENTS', message: `the arguments do not match the parameters of ${t.name}: / must have required property '${name}'; nothing was run` },
        });
        expect([asked, done]).toEqual([[], []]);
      }
      for (const [name, schema] of Object.entries(properties)) {
        const { asked, done, call } = host();
        // An enum also says the value is none of the allowed ones.
        const also = 'enum' in schema ? `; /${name} must be equal to one of the allowed values` : '';
        expect(await call(t, { ...good, [name]: 42 })).toEqual({
          error: { code: 'INVALID_ARGUMENTS', message: `the arguments do not match the parameters of ${t.name}: /${name} must be ${schema.type}${also}; nothing was run` },
        });
        expect([asked, done]).toEqual([[], []]);
      }
    }
  });

  it('refuses an activation that names no service, with every reason the schema gives', async () => {
    const { asked, call } = host();
    expect(await call(tool('mcp_activate_service'), {})).toEqual({
      error: {
        code: 'INVALID_ARGUMENTS',
        message: "the arguments do not match the parameters of mcp_activate_service: / must have required property 'id'; / must have required property 'name'; / must match a schema in anyOf; nothing was run",
      },
    });
    expect(asked).toEqual([]);
  });

  it('passes good arguments through: one approval showing them, then the implementation with the same values', async () => {
    const { asked, done, call } = host();
    const reply = await call(tool('mcp_register'), GOOD.mcp_register ?? {});
    expect(asked).toMatchObject([{ kind: 'registration', serviceName: 'wisp host', shown: GOOD.mcp_register, binding: { tool: 'mcp_register', argumentsDigest: expect.any(String) } }]);
    expect(done).toEqual([`register ${JSON.stringify({ ...GOOD.mcp_register, sandbox: { enabled: true, read: [], write: [], net: { mode: 'none' } } })}`]);
    expect(reply).toMatchObject({ registered: { id: 'svc-2', name: 'made' }, state: 'disabled' });
  });

  it('fills in what the schema leaves optional', async () => {
    const { done, call } = host();
    await call(tool('mcp_register'), { name: 'bare', command: '/usr/bin/bare' });
    expect(done).toEqual([`register ${JSON.stringify({ name: 'bare', command: '/usr/bin/bare', args: [], sandbox: { enabled: true, read: [], write: [], net: { mode: 'none' } } })}`]);
    await call(tool('mcp_install_npm'), { package: 'p', version: '1.0.0', bin: 'b' });
    expect(done.slice(1)).toEqual([`plan ${JSON.stringify({ package: 'p', version: '1.0.0', bin: 'b', args: [] })}`, 'install d1']);
  });

  it('offers every host tool with additionalProperties false, and refuses a property it does not take before any approval, naming it', async () => {
    for (const t of HOST_TOOLS) {
      expect(t.definition.function.parameters).toMatchObject({ additionalProperties: false });
      const { asked, done, call } = host();
      expect(await call(t, { ...(GOOD[t.name] ?? {}), env: { TOKEN: 'x' } })).toEqual({
        error: { code: 'INVALID_ARGUMENTS', message: `the arguments do not match the parameters of ${t.name}: / must NOT have additional properties ("env"); nothing was run` },
      });
      expect([asked, done]).toEqual([[], []]);
    }
  });

  it('activates by id before name, bound to the configuration shown', async () => {
    const { asked, done, call } = host();
    expect(await call(tool('mcp_activate_service'), { id: 'svc-1', name: 'other' })).toEqual({ service: 'files', state: { status: 'disabled', since: '2026-01-01T00:00:00.000Z' } });
    expect(done).toEqual(['describe {"id":"svc-1"}', 'activate svc-1@3']);
    expect(asked).toMatchObject([{ kind: 'activation', binding: { serviceId: 'svc-1', configVersion: 3 }, shown: { command: '/usr/bin/files', configVersion: 3 } }]);
  });

  it('refuses to register Wisp\'s own gateway before any approval: SELF_GATEWAY, nothing stored', async () => {
    const { asked, done, call } = host();
    expect(await call(tool('mcp_register'), { name: 'loop', command: '/usr/bin/node', args: ['/opt/wisp/bin/wispctl.js', 'mcp', 'serve'] })).toEqual({
      error: { code: 'SELF_GATEWAY', message: expect.stringContaining('loop runs Wisp\'s own gateway') },
    });
    expect(asked).toEqual([]);
    expect(done).toEqual([]);
  });

  it('refuses to activate Wisp\'s own gateway before any approval: SELF_GATEWAY', async () => {
    const { asked, done, call } = host({ command: '/usr/bin/node', args: ['/opt/wisp/bin/wispctl.js', '--socket', '/s', 'mcp', 'serve'] });
    expect(await call(tool('mcp_activate_service'), { name: 'files' })).toEqual({ error: { code: 'SELF_GATEWAY', message: expect.stringContaining('files runs Wisp\'s own gateway') } });
    expect(asked).toEqual([]);
    expect(done).toEqual(['describe {"name":"files"}']);
  });

  it('shows the sandbox an activation runs in, path by path, and the grants a registration asks for (issue 34)', async () => {
    const { asked, done, call } = host();
    await call(tool('mcp_activate_service'), { id: 'svc-1' });
    expect(asked[0]).toMatchObject({
      title: 'Trust and start this program in its sandbox (it sees only the paths listed)',
      shown: { sandbox: { status: 'on', read: [], write: [], net: { mode: 'none' } }, sees: ['read-only /usr (system)', 'network: none'] },
    });
    await call(tool('mcp_register'), { name: 'g', command: '/usr/bin/g', allowRead: ['/srv/docs'], net: 'all' });
    expect(asked[1]).toMatchObject({ title: expect.stringContaining('it will run sandboxed: ANY host (unchecked), its cwd and 1 granted path(s)'), shown: { allowRead: ['/srv/docs'], net: 'all' } });
    expect(done.at(-1)).toBe(`register ${JSON.stringify({ name: 'g', command: '/usr/bin/g', args: [], sandbox: { enabled: true, read: ['/srv/docs'], write: [], net: { mode: 'all' } } })}`);
  });

  it('names every host a registration may reach, and how: only those, or asking at each other one (issue 34)', async () => {
    const { asked, done, call } = host();
    await call(tool('mcp_register'), { name: 'n', command: '/usr/bin/n', allowNet: ['*.Example.com:8443', '[::1]:3000', 'api.example.com', 'api.example.com'] });
    expect(asked[0]?.title).toContain("it will run sandboxed: the network only to *.example.com:8443, [::1]:3000, api.example.com (through Wisp's proxy, each connection logged), its cwd");
    expect(done.at(-1)).toContain(JSON.stringify({ enabled: true, read: [], write: [], net: { mode: 'hosts', hosts: ['*.example.com:8443', '[::1]:3000', 'api.example.com'] } }));
    await call(tool('mcp_register'), { name: 'a', command: '/usr/bin/a', net: 'ask' });
    expect(asked[1]?.title).toContain('it will run sandboxed: asks you before each new host, its cwd');
    expect(done.at(-1)).toContain('"net":{"mode":"ask"}');
    for (const bad of [['a.example:99999'], ['*.1.2.3.4'], ['two words'], Array.from({ length: 65 }, (_, i) => `h${i}.example`)]) {
      const before = asked.length;
      expect(await call(tool('mcp_register'), { name: 'b', command: '/usr/bin/b', allowNet: bad })).toMatchObject({ error: { code: 'INVALID_PARAMS' } });
      expect(asked.length).toBe(before);
    }
  });

  it('still refuses a shell or package runner as a command, after the schema passed and before any approval', async () => {
    const { asked, done, call } = host();
    expect(await call(tool('mcp_register'), { name: 'x', command: '/usr/bin/npx' })).toEqual({
      error: { code: 'INVALID_CONFIG', message: 'npx is a shell or a package runner; register the installed program itself' },
    });
    expect([asked, done]).toEqual([[], []]);
  });

  it('reports a denied approval back to the model and runs nothing', async () => {
    const { done, call } = host({ deny: true });
    expect(await call(tool('mcp_list_services'), {})).toEqual({ error: { code: 'APPROVAL_DENIED', message: 'denied by client-2' } });
    expect(done).toEqual([]);
  });
});
