import path from 'node:path';
import { Type, type ObjectOptions, type Static, type TObject, type TProperties } from '@sinclair/typebox';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ApprovalKind, Binding } from '../approvals/index.js';
import { LIMITS, WispError, type ConnectionState, type Service } from '../core/index.js';
import type { ToolDefinition } from '../model/index.js';
import { canonicalJson, compileSchema, sha256Hex } from '../util/index.js';
import { failure } from './replies.js';
import { formatEgressGrant, isWispGateway, parseEgressGrant, selfGatewayError } from '../mcp/index.js';

/** What the daemon lets the model's host tools do; each call runs only after its own approval. */
export interface HostActions {
  /** Ids, names, states and variable NAMES: never values. */
  listServices(): Record<string, unknown>[];
  /** The current configuration of one service, as a human must see it before activation. */
  describe(ref: { id?: string; name?: string }): {
    id: string;
    name: string;
    transport: string;
    command: string;
    args: string[];
    cwd: string | null;
    env: string[];
    url: string | null;
    headers: string[];
    /** Env and header values written with `${VAR}`: as written. */
    templates: Record<string, string>;
    /** Every `${VAR}` a launch reads from the daemon's environment: field, variable, whether a secret, the file it is written in. */
    fromEnvironment: { field: string; variable: string; secret: boolean; file: string | null }[];
    /** Its sandbox: on with its grants, off, legacy (registered before sandboxes), remote. */
    sandbox: Service['sandbox'];
    /** Its media setting (Service.media). */
    media: boolean;
    configVersion: number;
  };
  /** What a sandboxed launch of it would see, one line a path (services.sandboxPlan); null when it is not sandboxed. */
  sandboxSees(id: string): Promise<string[] | null>;
  /** Saves a DISABLED configuration, sandboxed (with these grants, if any). */
  register(input: { name: string; command: string; args: string[]; cwd?: string; sandbox: { enabled: true; read: string[]; write: string[]; net: RegisteredNet } }): Promise<{ id: string; name: string; configVersion: number }>;
  activate(id: string, configVersion: number, signal: AbortSignal): Promise<ConnectionState>;
  /** Plans an npm install and refuses early what can never run; `shown` is what the human approves. */
  planInstall(
    input: { package: string; version: string; bin: string; args: string[] },
    signal: AbortSignal,
  ): Promise<{ digest: string; title: string; shown: Record<string, unknown> }>;
  /** Runs an approved plan; resolves with the service it registered (disabled). */
  install(digest: string, signal: AbortSignal): Promise<{ service: { id: string; name: string }; lockedPackages: number; installScriptsNotRun: string[]; reused: boolean }>;
}

/** One approval a host tool needs: `current` is the binding as it is when the answer comes (a change makes it stale). */
export interface HostApproval {
  readonly kind: ApprovalKind;
  readonly binding: Binding;
  readonly current: () => Binding;
  readonly serviceName: string;
  readonly title: string;
  readonly shown: Record<string, unknown>;
}

export interface HostToolContext {
  readonly actions: HostActions;
  /** Resolves once a human approved and the approval was spent; throws (denied, stale, cancelled) otherwise. */
  readonly ask: (approval: HostApproval) => Promise<void>;
  readonly signal: AbortSignal;
}

/** A host tool: one definition for what the model is offered and for what its arguments must be. */
export interface HostTool {
  readonly name: string;
  /** What the model sees; `parameters` is the very schema the arguments are validated with. */
  readonly definition: ToolDefinition;
  /**
   * Validates `args` with the compiled schema, then runs the tool. The reply is the JSON text the
   * model reads; arguments that fail the schema are refused before any approval with
   * `{"error":{"code":"INVALID_ARGUMENTS","message":"the arguments do not match the parameters of <tool>: <path> <problem>[; ...]; nothing was run"}}`.
   */
  call(args: Record<string, unknown>, ctx: HostToolContext): Promise<string>;
}

interface HostToolSpec<S extends TObject> {
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  /** Runs after the arguments passed the schema; what it returns is sent to the model as JSON. */
  readonly run: (args: Static<S>, ctx: HostToolContext) => Promise<unknown>;
}

function defineHostTool<S extends TObject>(spec: HostToolSpec<S>): HostTool {
  let validate: ValidateFunction<Static<S>> | undefined;
  return {
    name: spec.name,
    definition: { type: 'function', function: { name: spec.name, description: spec.description, parameters: spec.parameters } },
    async call(args, ctx) {
      // Compiled once, on first use: a daemon whose model never calls a host tool compiles nothing.
      // Our own schemas, so strict (a typo in one is a bug); `required` may name properties declared beside an anyOf.
      validate ??= compileSchema<Static<S>>(spec.parameters, 'strict-anyof');
      if (!validate(args)) return failure('INVALID_ARGUMENTS', `the arguments do not match the parameters of ${spec.name}: ${describe(validate.errors)}; nothing was run`);
      try {
        return JSON.stringify(await spec.run(args, ctx));
      } catch (error) {
        if (ctx.signal.aborted) throw error;
        return error instanceof WispError ? failure(error.code, error.message) : failure('INTERNAL_ERROR', 'the host tool failed unexpectedly');
      }
    },
  };
}

function describe(errors: readonly ErrorObject[] | null | undefined): string {
  return (errors ?? [])
    .map((e) => {
      const where = e.instancePath === '' ? '/' : e.instancePath;
      // Named, so the model can tell which field it added (the name is its own text, quoted).
      const extra = e.keyword === 'additionalProperties' ? ` (${JSON.stringify(String((e.params as { additionalProperty?: unknown }).additionalProperty).slice(0, 64))})` : '';
      return `${where} ${e.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
}

/**
 * Every host tool's parameters: an object with exactly the properties declared. A property
 * the tool does not take (an `env` for mcp_register, say) is refused before anything is
 * shown, never shown to the human and then dropped.
 */
const Params = <P extends TProperties>(properties: P, options: ObjectOptions = {}): TObject<P> => Type.Object(properties, { ...options, additionalProperties: false });

/** A host tool's own approval binding: the tool and a digest of exactly the arguments shown. */
function argumentsBinding(tool: string, args: Record<string, unknown>): Binding {
  return { tool, argumentsDigest: sha256Hex(canonicalJson(args)) };
}

/** Shells and package runners are refused as a registered command: the seeds say so. */
const REFUSED_COMMANDS = new Set(['sh', 'bash', 'zsh', 'fish', 'dash', 'ksh', 'csh', 'tcsh', 'env', 'sudo', 'npx', 'npm', 'pnpm', 'pnpx', 'yarn', 'bunx', 'bun', 'uvx', 'pipx', 'deno']);

const Strings = (description?: string) => Type.Array(Type.String(), description !== undefined ? { description } : {});

const listServices = defineHostTool({
  name: 'mcp_list_services',
  description:
    'List the MCP services registered with Wisp Host: ids, names, states, tool counts and environment variable names (never values). ' +
    'heldTools counts tools that changed or appeared since the user trusted the service: unusable until the user reviews and accepts them (wispctl mcp review). Needs the user\'s approval.',
  parameters: Params({}),
  run: async (args, { actions, ask }) => {
    const binding = argumentsBinding('mcp_list_services', args);
    await ask({ kind: 'host_tool', binding, current: () => binding, serviceName: 'wisp host', title: 'List the registered MCP services (names, states, variable names; never values)', shown: args });
    return { services: actions.listServices() };
  },
});

const register = defineHostTool({
  name: 'mcp_register',
  description:
    'Save a DISABLED configuration for an MCP server that is already installed: the absolute path of the program, its arguments and an optional absolute working directory. ' +
    'It will run in a sandbox: no network, its cwd read-write, nothing else of the user\'s. Paths it must read or write go in allowRead / allowWrite (absolute, existing); hosts it must reach go in allowNet (host[:port], through Wisp\'s egress proxy); net "ask" has the user asked at each new host, and net "all" gives it the whole network: the user sees each. ' +
    'Shells and package runners (npx...) are refused. It installs and starts nothing. Needs the user\'s approval.',
  parameters: Params({
    name: Type.String(),
    command: Type.String(),
    args: Type.Optional(Strings()),
    cwd: Type.Optional(Type.String()),
    allowRead: Type.Optional(Strings('Absolute paths the server may read (besides what it needs to run)')),
    allowWrite: Type.Optional(Strings('Absolute paths the server may read and write (besides its cwd)')),
    allowNet: Type.Optional(Strings('Hosts the server may connect to, host[:port] (*.example.com for its subdomains); without a port, 80 and 443')),
    net: Type.Optional(Type.Unsafe<'none' | 'ask' | 'all'>(Type.String({ enum: ['none', 'ask', 'all'], description: 'none (default): only the allowNet hosts, if any; ask: the user is asked at each other host; all: any host, unchecked' }))),
  }),
  run: async (args, { actions, ask }) => {
    const { name, command, args: list, cwd } = args;
    if (!path.isAbsolute(command)) throw new WispError('INVALID_CONFIG', 'the command must be an absolute path to an installed program');
    if (REFUSED_COMMANDS.has(path.basename(command))) {
      throw new WispError('INVALID_CONFIG', `${path.basename(command)} is a shell or a package runner; register the installed program itself`);
    }
    // Refused before the human is asked: approving it could only fail.
    if (isWispGateway({ command, args: list ?? [] })) throw selfGatewayError(name, 'registered');
    const binding = argumentsBinding('mcp_register', args);
    const net = registeredNet(args.net ?? 'none', args.allowNet ?? []);
    const sandbox = { enabled: true as const, read: args.allowRead ?? [], write: args.allowWrite ?? [], net };
    const title = `Save a DISABLED configuration (nothing is installed or started); it will run sandboxed: ${netText(net)}, its cwd and ${sandbox.read.length + sandbox.write.length} granted path(s), nothing else of yours`;
    await ask({ kind: 'registration', binding, current: () => binding, serviceName: 'wisp host', title, shown: args });
    const saved = await actions.register({ name, command, args: list ?? [], ...(cwd !== undefined ? { cwd } : {}), sandbox });
    return { registered: saved, state: 'disabled', note: 'Saved a disabled configuration. Nothing was installed or started; activating it needs its own approval (mcp_activate_service).' };
  },
});

/** The network a model may ask for a server it registers: each host named, checked before the human is asked. */
export type RegisteredNet = { mode: 'none' } | { mode: 'all' } | { mode: 'ask'; hosts?: string[] } | { mode: 'hosts'; hosts: string[] };

function registeredNet(mode: 'none' | 'ask' | 'all', allowNet: readonly string[]): RegisteredNet {
  if (allowNet.length > LIMITS.maxSandboxGrants) throw new WispError('INVALID_PARAMS', `allowNet: at most ${LIMITS.maxSandboxGrants} hosts`);
  const hosts = [
    ...new Set(
      allowNet.map((text, i) => {
        const parsed = parseEgressGrant(text);
        if (!parsed.ok) throw new WispError('INVALID_PARAMS', `allowNet[${i}]: ${parsed.reason}`);
        return formatEgressGrant(parsed.grant);
      }),
    ),
  ];
  if (mode === 'all') {
    if (hosts.length > 0) throw new WispError('INVALID_PARAMS', 'net "all" already reaches every host: give allowNet with net "none" or "ask" instead');
    return { mode: 'all' };
  }
  if (mode === 'ask') return hosts.length > 0 ? { mode: 'ask', hosts } : { mode: 'ask' };
  return hosts.length > 0 ? { mode: 'hosts', hosts } : { mode: 'none' };
}

/** The network in the approval's title, every host named (each was checked as a host grant: no control characters). */
function netText(net: RegisteredNet): string {
  if (net.mode === 'all') return 'ANY host (unchecked)';
  if (net.mode === 'none') return 'no network';
  const hosts = net.hosts?.join(', ') ?? '';
  if (net.mode === 'hosts') return `the network only to ${hosts} (through Wisp's proxy, each connection logged)`;
  return `asks you before each new host${hosts !== '' ? ` (${hosts} granted)` : ''}`;
}

const installNpm = defineHostTool({
  name: 'mcp_install_npm',
  description:
    'Install an MCP server published on the npm registry, pinned to an EXACT version (no ranges or tags), and register it DISABLED. ' +
    'Every locked package is verified and no install script runs. The user sees the source registry, the target directory and what it will do, and must approve. ' +
    'Give only non-sensitive launch args: never secrets (the user sets those).',
  parameters: Params({
    package: Type.String({ description: 'Full package name, e.g. @modelcontextprotocol/server-everything' }),
    version: Type.String({ description: 'Exact version, e.g. 2026.8.31' }),
    bin: Type.String({ description: 'The package\'s JavaScript bin name' }),
    args: Type.Optional(Strings('Non-sensitive launch arguments')),
  }),
  run: async (args, { actions, ask, signal }) => {
    const planned = await actions.planInstall({ package: args.package, version: args.version, bin: args.bin, args: args.args ?? [] }, signal);
    const binding = { planDigest: planned.digest };
    await ask({ kind: 'install', binding, current: () => binding, serviceName: 'wisp host', title: planned.title, shown: planned.shown });
    const done = await actions.install(planned.digest, signal);
    return {
      ...done,
      state: 'disabled',
      note: 'Installed with install scripts disabled and registered as a DISABLED service. Starting it needs its own approval (mcp_activate_service). Secrets are never set by the model: the user sets them with wispctl.',
    };
  },
});

const activate = defineHostTool({
  name: 'mcp_activate_service',
  description:
    'Ask the user to trust and start a registered service (by id or name). The user sees its current configuration; if it changes before the answer, the request is stale. ' +
    'New tools appear from the next user request.',
  parameters: Params({ id: Type.Optional(Type.String()), name: Type.Optional(Type.String()) }, { anyOf: [{ required: ['id'] }, { required: ['name'] }] }),
  run: async (args, { actions, ask, signal }) => {
    const shown = actions.describe(args.id !== undefined ? { id: args.id } : { name: args.name ?? '' });
    // Refused before a human is asked: it would be refused after the answer anyway.
    if (isWispGateway(shown)) throw selfGatewayError(shown.name, 'activated');
    const sees = shown.transport === 'stdio' ? await actions.sandboxSees(shown.id) : null;
    const now = (): Binding => {
      const current = actions.describe({ id: shown.id });
      return { serviceId: current.id, configVersion: current.configVersion };
    };
    await ask({
      kind: 'activation',
      binding: { serviceId: shown.id, configVersion: shown.configVersion },
      current: now,
      serviceName: shown.name,
      title: activationTitle(shown.transport, shown.sandbox),
      shown: {
        ...(shown.transport === 'stdio' ? { command: shown.command, args: shown.args, cwd: shown.cwd, env: shown.env, sandbox: shown.sandbox, ...(sees !== null ? { sees } : {}) } : { url: shown.url, headers: shown.headers }),
        // The templates are shown as written; every variable they read is named, field by field.
        ...(Object.keys(shown.templates).length > 0 ? { templates: shown.templates } : {}),
        ...(shown.fromEnvironment.length > 0 ? { fromDaemonEnvironment: shown.fromEnvironment } : {}),
        // Only when on: its media then pass whole to gateway clients.
        ...(shown.media ? { media: 'images, audio and binary resources passed whole to MCP clients of wispctl mcp serve' } : {}),
        configVersion: shown.configVersion,
      },
    });
    return { service: shown.name, state: await actions.activate(shown.id, shown.configVersion, signal) };
  },
});

/** What activating means, in the approval's title: in its sandbox, or with the user's permissions. */
function activationTitle(transport: string, sandbox: Service['sandbox']): string {
  if (transport !== 'stdio') return 'Trust and connect to this remote server (what it answers is untrusted)';
  if (sandbox.status === 'on') return 'Trust and start this program in its sandbox (it sees only the paths listed)';
  return `Trust and start this program NOT sandboxed (${sandbox.status === 'off' ? 'its sandbox is off' : 'registered before sandboxes'}): it runs with your permissions`;
}

/** The model's host tools, in the order they are offered. Each asks a human first and claims no more than it did. */
export const HOST_TOOLS: readonly HostTool[] = [listServices, register, installNpm, activate];

const byName = new Map(HOST_TOOLS.map((tool) => [tool.name, tool]));

export function hostTool(name: string): HostTool | undefined {
  return byName.get(name);
}
