/**
 * The shapes of daemon.status and of the config sources report.
 *
 * Everything here is sent over the socket: changes must be additive.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorCode } from '../errors.js';
import { EnvName, ErrorCodeSchema, Timestamp } from './shapes.js';

/** Why mcp-servers.json was not loaded at start (it was moved aside, intact). */
export const RegistryLoadError = Type.Object({
  code: Type.Union([Type.Literal('REGISTRY_UNREADABLE' satisfies ErrorCode), Type.Literal('REGISTRY_INVALID' satisfies ErrorCode)], { description: 'An error code from the catalog (docs/errors.md).' }),
  message: Type.String(),
  movedTo: Type.String({ description: 'Where the unreadable file was moved, intact.' }),
  at: Timestamp,
});
export type RegistryLoadError = Static<typeof RegistryLoadError>;

const EntryOriginView = Type.Object({
  source: Type.Union([Type.Literal('global'), Type.Literal('plugin'), Type.Literal('project')]),
  file: Type.String(),
  plugin: Type.Union([Type.String(), Type.Null()]),
});

const SourceProblemView = Type.Object({
  file: Type.String({ description: 'The file, or a directory (the config dir, plugins/) when nothing in it could be read.' }),
  message: Type.String(),
  code: Type.Optional(
    Type.Union([Type.Literal('UNSAFE_FILE' satisfies ErrorCode), Type.Literal('INVALID_CONFIG' satisfies ErrorCode)], {
      description: 'Set when it is there but unusable: UNSAFE_FILE (not your own: another owner, writable by group or others, a symlink; nothing was read), INVALID_CONFIG (unreadable, not JSON, not the expected shape). Absent when it is simply not there (its services go).',
    }),
  ),
  kept: Type.Optional(Type.Array(Type.String(), { description: 'With a code: the services it gave before, kept as they were (not updated, not removed) until it can be read again.' })),
});

export const SourcesReport = Type.Object({
  at: Timestamp,
  entries: Type.Array(
    Type.Object({
      name: Type.String(),
      origin: EntryOriginView,
      transport: Type.Union([Type.Literal('stdio'), Type.Literal('http'), Type.Literal('sse')]),
      overrides: Type.Union([EntryOriginView, Type.Null()], { description: 'The entry this one replaced whole (a project entry over a global one).' }),
      warnings: Type.Array(Type.String(), { description: 'Unset ${VAR}s, command and url both given, ...' }),
      action: Type.Union([Type.Literal('added'), Type.Literal('updated'), Type.Literal('unchanged'), Type.Literal('skipped')], {
        description: 'updated: its content changed, so it was stopped and disabled until trusted again.',
      }),
      reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was skipped (name taken, limit reached).' }),
      serviceId: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  skipped: Type.Array(
    Type.Object({
      name: Type.String(),
      origin: EntryOriginView,
      reason: Type.String(),
      code: Type.Optional(ErrorCodeSchema),
    }),
    {
      description:
        'Entries not used: invalid (with why), replaced by a later one, a plugin duplicate, or refused with code ENV_NOT_ALLOWED (a ${VAR} it may not read: the daemon\'s own, or one not named for its project).',
    },
  ),
  problems: Type.Array(SourceProblemView, { description: 'Files that could not be used at all.' }),
  removed: Type.Array(Type.String(), { description: 'Services removed because their entry is gone (or no longer valid).' }),
});
export type SourcesReport = Static<typeof SourcesReport>;

export const SourcesView = Type.Object({
  configDir: Type.String({ description: 'Holds settings.json (global mcpServers, enabledPlugins) and plugins/<folder>/plugin.json.' }),
  projects: Type.Array(Type.String(), { description: 'Project directories whose .mcp.json is read, in order.' }),
  allowEnv: Type.Array(Type.Object({ directory: Type.String(), variables: Type.Array(EnvName) }), {
    description: 'For each project given any: the variables of the daemon\'s environment you named for it (sources.addProject allowEnv), besides the public ones.',
  }),
  report: Type.Union([SourcesReport, Type.Null()], { description: 'The last sync (daemon start or reload).' }),
});

/**
 * The status panel at a glance (seed 002's /mcp: the initialization phase and the connection
 * count), computed by core/service-summary.ts from the services as services.list shows them.
 */
export const StartupPhase = Type.Union(
  [
    Type.Object({ status: Type.Literal('idle') }, { description: 'No service is started or starting: every one is disabled (or none is registered).' }),
    Type.Object({
      status: Type.Literal('starting'),
      active: Type.Integer({ minimum: 0 }),
      of: Type.Integer({ minimum: 1, description: 'The services started or starting (not disabled, not stopping).' }),
      failed: Type.Integer({ minimum: 0, description: 'Of those, failed or waiting for a login.' }),
    }),
    Type.Object({ status: Type.Literal('ready') }, { description: 'Every service started is active.' }),
    Type.Object({
      status: Type.Literal('some_failed'),
      failed: Type.Integer({ minimum: 0 }),
      needsAuth: Type.Integer({ minimum: 0, description: 'Remote services waiting for a login (wispctl mcp login NAME).' }),
      of: Type.Integer({ minimum: 1 }),
    }),
  ],
  { description: 'Where starting the services stands: idle, starting (some still activating), ready (every one started is active), some_failed (none activating, some failed or waiting for a login).' },
);
export type StartupPhase = Static<typeof StartupPhase>;

export const ServicesSummary = Type.Object({
  total: Type.Integer({ minimum: 0, description: 'Registered services.' }),
  connected: Type.Integer({ minimum: 0, description: 'Active services (connected, their tools discovered).' }),
  phase: StartupPhase,
  held: Type.Array(Type.Object({ service: Type.String(), tools: Type.Integer({ minimum: 1 }) }), {
    description: 'The services with held tools (changed or added since trusted; not callable until reviewed: wispctl mcp review NAME), and how many.',
  }),
});
export type ServicesSummary = Static<typeof ServicesSummary>;

export const DaemonStatus = Type.Object({
  version: Type.String(),
  protocolVersion: Type.String(),
  pid: Type.Integer(),
  runId: Type.String({ description: 'Changes on every daemon start; event seq numbers are per run.' }),
  startedAt: Timestamp,
  uptimeMs: Type.Integer(),
  nodeVersion: Type.String(),
  paths: Type.Object({
    dataDir: Type.String(),
    configDir: Type.String({ description: 'Config sources: settings.json (global mcpServers, enabledPlugins) and plugins/.' }),
    runtimeDir: Type.String(),
    socket: Type.String(),
    registryFile: Type.String(),
  }),
  counts: Type.Object({
    services: Type.Integer(),
    enabledServices: Type.Integer(),
    activeTools: Type.Integer(),
    clients: Type.Integer(),
    subscribers: Type.Integer(),
  }),
  services: ServicesSummary,
  load: Type.Object(
    {
      connections: Type.Integer({ description: 'Control-socket connections open (maxConnections).' }),
      heldFrameBytes: Type.Integer({ description: 'Bytes of unfinished frames held across every connection (maxHeldFrameBytes); 0 once they end or close.' }),
      pendingCalls: Type.Integer({ description: 'Calls waiting for an answer (maxPendingCalls).' }),
      gateways: Type.Integer({ description: 'Gateways with a connection or a waiting call.' }),
      gatewayConnections: Type.Integer({ description: 'Connections of every gateway together (maxGatewayConnections).' }),
      gatewayPendingCalls: Type.Integer({ description: 'Waiting calls of every gateway together (maxGatewayPendingCalls).' }),
    },
    { description: 'What is counted against the socket\'s caps now (docs/protocol.md, Limits).' },
  ),
  lastSeq: Type.Integer(),
  you: Type.Object({ clientId: Type.String() }, { description: 'The connection that asked.' }),
  registryLoadError: Type.Union([RegistryLoadError, Type.Null()], {
    description: 'Set when mcp-servers.json could not be read at start and was moved aside.',
  }),
  sourceProblems: Type.Array(Type.Object({ file: Type.String(), message: Type.String(), code: Type.Union([Type.Literal('UNSAFE_FILE' satisfies ErrorCode), Type.Literal('INVALID_CONFIG' satisfies ErrorCode)]) }), {
    description: 'The config sources the last sync skipped because they are there but unusable (their services kept as they were); wispctl mcp sources says more. Empty when all were used.',
  }),
});
export type DaemonStatus = Static<typeof DaemonStatus>;
