import { randomUUID } from 'node:crypto';
import { ENV_NAME_PATTERN, LIMITS, SERVICE_NAME_PATTERN, WispError, type ConnectionState, type Service, type ToolInfo } from '../../core/index.js';
import { integer, oneOf, optionalText, secretEntries, text, texts, type Params } from './params.js';
import { hex, now, type DemoWorld } from './world.js';

/** A sample tool: what a demo server "offers" (nothing answers but the demo). */
export interface SampleTool {
  readonly name: string;
  readonly title: string | null;
  readonly description: string;
  readonly inputSchema: Record<string, unknown>;
  readonly annotations: Record<string, unknown> | null;
}

const ECHO: SampleTool = {
  name: 'echo',
  title: 'Echo',
  description: 'Returns the text it is given (demo: answered in memory).',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnlyHint: true },
};
const NOTE: SampleTool = {
  name: 'add_note',
  title: 'Add a note',
  description: 'Saves a note (demo: nothing is saved).',
  inputSchema: { type: 'object', properties: { title: { type: 'string' }, body: { type: 'string' } }, required: ['title'] },
  annotations: { destructiveHint: false },
};
export const FORECAST: SampleTool = {
  name: 'forecast',
  title: 'Weather forecast',
  description: 'Tomorrow\'s weather for a city (demo: made-up data, no network).',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  annotations: { readOnlyHint: true, openWorldHint: true },
};

/** Which tools a demo service offers once "active". */
function sampleTools(service: Service): SampleTool[] {
  if (service.origin.kind === 'install') return [FORECAST];
  return service.name.includes('note') ? [ECHO, NOTE] : [ECHO];
}

function blank(name: string, transport: 'stdio' | 'http'): Service {
  const at = now();
  return {
    id: randomUUID(),
    name,
    transport,
    command: '',
    url: null,
    headers: [],
    oauth: null,
    args: [],
    cwd: null,
    timeoutMs: null,
    env: [],
    fromEnvironment: [],
    envTemplates: [],
    headerTemplates: [],
    environmentReads: [],
    sandbox: transport === 'stdio' ? { status: 'on', read: [], write: [], net: { mode: 'none' } } : { status: 'remote' },
    media: false,
    origin: { kind: 'manual' },
    enabled: false,
    // The demo's tools are the ones shown at its pretend trust: none is ever held.
    heldTools: 0,
    configVersion: 1,
    connection: { status: 'disabled', since: at },
    createdAt: at,
    updatedAt: at,
  };
}

function checkName(world: DemoWorld, name: string, except?: string): void {
  if (!new RegExp(SERVICE_NAME_PATTERN).test(name)) throw new WispError('INVALID_PARAMS', 'a name is 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit');
  if ([...world.services.values()].some((s) => s.name === name && s.id !== except)) throw new WispError('SERVICE_NAME_TAKEN', `a service named ${name} exists already`);
}

function checkRoom(world: DemoWorld): void {
  if (world.services.size >= LIMITS.maxServices) throw new WispError('LIMIT_EXCEEDED', `at most ${LIMITS.maxServices} services may be registered: remove one first`);
}

export function addStdio(world: DemoWorld, fields: { name: string; command: string; args: string[]; cwd: string | null; origin?: Service['origin'] }): Service {
  checkRoom(world);
  checkName(world, fields.name);
  if (fields.cwd !== null && !fields.cwd.startsWith('/')) throw new WispError('INVALID_CONFIG', 'the working directory must be an absolute path');
  const service: Service = { ...blank(fields.name, 'stdio'), command: fields.command, args: fields.args, cwd: fields.cwd, ...(fields.origin !== undefined ? { origin: fields.origin } : {}) };
  return world.put(service, 'registered');
}

/** An edit, a new variable or header: stopped, disabled, version bumped (as the daemon does). */
function edited(world: DemoWorld, service: Service, change: Partial<Service>): Service {
  stop(world, service);
  const at = now();
  return world.put({ ...service, ...change, enabled: false, configVersion: service.configVersion + 1, connection: { status: 'disabled', since: at }, updatedAt: at }, 'updated');
}

function stop(world: DemoWorld, service: Service): void {
  if (service.connection.status === 'disabled') return;
  world.tools.delete(service.id);
}

function toolInfos(service: Service, generation: number, version: number): ToolInfo[] {
  return sampleTools(service).map((tool) => ({
    ...tool,
    serviceId: service.id,
    serviceName: service.name,
    modelName: `mcp_${service.id.replace(/-/g, '').slice(0, 12)}_${hex(tool.name, 12)}`,
    generation,
    toolListVersion: version,
    // The demo's tools are the ones shown at its (pretend) trust: pinned, nothing held.
    pin: 'trusted' as const,
    unavailable: null,
    outputSchema: null,
    icons: [],
    meta: null,
  }));
}

/**
 * Activation in the demo: it walks the states a real one does, starts nothing, and "fails"
 * for a command named fail (the seeds' way to see a start failure).
 */
export async function activate(world: DemoWorld, service: Service, configVersion: number): Promise<Service> {
  if (configVersion !== service.configVersion) throw new WispError('APPROVAL_STALE', `${service.name} changed since it was shown (now version ${service.configVersion}): look again`);
  if (service.connection.status === 'activating' || service.connection.status === 'stopping') throw new WispError('SERVICE_BUSY', `${service.name} is ${service.connection.status}`);
  const generation = 'generation' in service.connection ? service.connection.generation + 1 : 1;
  let current = world.put({ ...service, enabled: true, connection: { status: 'activating', phase: 'spawning', generation, pid: null, since: now() } }, 'state');
  await world.later(300);
  if (current.transport === 'stdio' && current.command.split('/').pop() === 'fail') {
    const failed: ConnectionState = { status: 'failed', generation, code: 'SPAWN_FAILED', message: 'demo: a command named fail shows how a start failure looks (nothing was run)', at: now() };
    return world.put({ ...current, enabled: false, connection: failed }, 'state');
  }
  current = world.put({ ...current, connection: { status: 'activating', phase: 'discovering', generation, pid: null, since: now() } }, 'state');
  await world.later(300);
  const tools = toolInfos(current, generation, 1);
  world.tools.set(current.id, tools);
  const server = { name: `demo-${current.name}`, version: '1.0.0', protocolVersion: '2025-11-25' };
  current = world.put({ ...current, connection: { status: 'active', generation, pid: null, toolCount: tools.length, toolListVersion: 1, server, since: now() } }, 'state');
  world.emit({ type: 'service.tools', service: { id: current.id, name: current.name }, toolListVersion: 1, toolCount: tools.length });
  return current;
}

type Handler = (world: DemoWorld, params: Params) => unknown;

/** services.* and tools.list, as the daemon answers them, in memory. */
export const SERVICE_METHODS: Readonly<Record<string, Handler>> = {
  'services.list': (world) => ({ services: [...world.services.values()] }),
  'services.register': (world, p) => ({ service: addStdio(world, { name: text(p, 'name', 64), command: text(p, 'command'), args: texts(p, 'args'), cwd: optionalText(p, 'cwd') ?? null }) }),
  'services.registerRemote': (world, p) => {
    checkRoom(world);
    const name = text(p, 'name', 64);
    checkName(world, name);
    const url = text(p, 'url');
    if (!/^https?:\/\/\S+$/.test(url)) throw new WispError('INVALID_PARAMS', 'url must start with http:// or https://');
    return { service: world.put({ ...blank(name, 'http'), url }, 'registered') };
  },
  'services.update': (world, p) => {
    const service = world.service(p);
    if (p.configVersion !== undefined && p.configVersion !== service.configVersion) throw new WispError('VERSION_CONFLICT', `${service.name} was edited elsewhere (now version ${service.configVersion})`);
    if (service.origin.kind === 'source') throw new WispError('INVALID_CONFIG', `${service.name} comes from a config file: edit the file and reload`);
    const set = (typeof p.set === 'object' && p.set !== null ? p.set : {}) as Params;
    const change: Partial<Service> = {};
    if (set.name !== undefined) checkName(world, (change.name = text(set, 'name', 64)), service.id);
    if (set.command !== undefined) change.command = text(set, 'command');
    if (set.args !== undefined) change.args = texts(set, 'args');
    if (set.cwd !== undefined) change.cwd = set.cwd === null ? null : text(set, 'cwd');
    if (set.url !== undefined && service.transport === 'http') change.url = text(set, 'url');
    if (set.timeoutMs !== undefined) change.timeoutMs = set.timeoutMs === null ? null : integer(set, 'timeoutMs');
    return { service: edited(world, service, change) };
  },
  'services.delete': (world, p) => {
    const service = world.service(p);
    if (service.origin.kind === 'source') throw new WispError('INVALID_CONFIG', `${service.name} comes from a config file (${service.origin.file}): remove it there and reload`);
    stop(world, service);
    world.services.delete(service.id);
    world.emit({ type: 'service.deleted', service: { id: service.id, name: service.name } });
    return { deleted: { id: service.id, name: service.name } };
  },
  'services.setEnv': (world, p) => secrets(world, p, 'variables', 'env', new RegExp(ENV_NAME_PATTERN)),
  'services.setHeaders': (world, p) => secrets(world, p, 'headers', 'headers', /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/),
  'services.carryOverEnv': (world, p) => ({ service: world.service(p) }),
  'services.activate': async (world, p) => ({ service: await activate(world, world.service(p), integer(p, 'configVersion')) }),
  'services.disable': (world, p) => {
    const service = world.service(p);
    stop(world, service);
    return { service: world.put({ ...service, enabled: false, connection: { status: 'disabled', since: now() } }, 'state') };
  },
  'services.refreshTools': (world, p) => {
    const service = world.service(p);
    if (service.connection.status !== 'active') throw new WispError('SERVICE_NOT_ACTIVE', `${service.name} is not active`);
    const version = service.connection.toolListVersion + 1;
    const tools = toolInfos(service, service.connection.generation, version);
    world.tools.set(service.id, tools);
    const refreshed = world.put({ ...service, connection: { ...service.connection, toolListVersion: version, toolCount: tools.length } }, 'state');
    world.emit({ type: 'service.tools', service: { id: service.id, name: service.name }, toolListVersion: version, toolCount: tools.length });
    return { service: refreshed };
  },
  'services.logs': (world, p) => {
    world.service(p);
    return { stderr: '', droppedChars: 0 };
  },
  // A made-up plan, as a sandboxed demo server would be given: nothing of the user's.
  'services.sandboxPlan': (world, p) => {
    const service = world.service(p);
    if (service.sandbox.status !== 'on') return { sandbox: service.sandbox, plan: null };
    const mounts = [
      { path: '/home/demo', access: 'tmpfs' as const, why: 'home' as const },
      { path: '/tmp', access: 'tmpfs' as const, why: 'tmp' as const },
      { path: '/usr', access: 'read' as const, why: 'system' as const },
    ];
    return { sandbox: service.sandbox, plan: { available: true, reason: null, command: service.command, mounts, home: '/home/demo', chdir: '/home/demo', network: 'none' as const, offered: [], warnings: [], taskLimit: 512 } };
  },
  'tools.list': (world, p) => {
    const id = optionalText(p, 'serviceId', 128);
    return { tools: [...world.tools.entries()].filter(([sid]) => id === undefined || sid === id).flatMap(([, tools]) => tools), nextCursor: null };
  },
};

/** setEnv / setHeaders: the names and storage are kept, the values dropped on arrival. */
function secrets(world: DemoWorld, p: Params, key: string, list: 'env' | 'headers', pattern: RegExp): { service: Service } {
  const service = world.service(p);
  const mode = oneOf(p, 'mode', ['replace', 'upsert'] as const);
  const given = secretEntries(p, key, pattern);
  const kept = mode === 'replace' ? [] : service[list].filter((v) => !given.some((g) => g.name === v.name));
  return { service: edited(world, service, { [list]: [...kept, ...given] }) };
}
