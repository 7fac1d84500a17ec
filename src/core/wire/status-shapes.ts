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
  problems: Type.Array(Type.Object({ file: Type.String(), message: Type.String() }), { description: 'Files that could not be used at all.' }),
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
  lastSeq: Type.Integer(),
  you: Type.Object({ clientId: Type.String() }, { description: 'The connection that asked.' }),
  registryLoadError: Type.Union([RegistryLoadError, Type.Null()], {
    description: 'Set when mcp-servers.json could not be read at start and was moved aside.',
  }),
});
export type DaemonStatus = Static<typeof DaemonStatus>;
