/** The methods of sessions, the model, installs, config sources and imports (part of the method table). */
import { Type } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { method, type MethodDef } from './define.js';
import { Digest, InstallAttempt, InstallPlanView, InstallSettingsView } from './install-shapes.js';
import { EnvName, ErrorCodeSchema, ModelSettingsView, NoNul, NoParams, Service, SessionInfo, Task, TranscriptMessage } from './shapes.js';
import { SourcesView } from './status-shapes.js';

export const sessionMethods = {
  'sessions.create': method({
    summary: 'Start a new model session (a conversation).',
    params: Type.Object({ title: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
    result: Type.Object({ session: SessionInfo }),
  }),
  'sessions.list': method({
    summary: 'Every session, newest last.',
    params: NoParams,
    result: Type.Object({ sessions: Type.Array(SessionInfo) }),
  }),
  'sessions.get': method({
    summary: 'A session with its transcript and tasks: the most recent that fit in one reply (512 KB of messages, 128 KB of tasks); omittedMessages and omittedTasks count the older ones left out.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({
      session: SessionInfo,
      messages: Type.Array(TranscriptMessage),
      tasks: Type.Array(Task),
      omittedMessages: Type.Integer({ minimum: 0 }),
      omittedTasks: Type.Integer({ minimum: 0 }),
    }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'sessions.delete': method({
    summary: 'Cancel its task (if any) and delete a session and its transcript.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({ deleted: Type.String() }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'sessions.send': method({
    summary:
      'Start a task: one user request. It captures the active tools now and keeps that snapshot for all its model rounds. Answers at once with the task; ' +
      'progress comes as events (model.delta, model.turn, approval.*, tool.call.*, task.state).',
    params: Type.Object(
      { id: Type.String({ minLength: 1, maxLength: 128 }), text: Type.String({ minLength: 1, maxLength: LIMITS.maxUserMessageChars }) },
      { additionalProperties: false },
    ),
    result: Type.Object({ task: Task }),
    errors: ['SESSION_NOT_FOUND', 'TASK_RUNNING'],
  }),
  'sessions.cancel': method({
    summary: 'Cancel the running task: stops the model stream, cancels its pending approvals and running calls.',
    params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    result: Type.Object({ task: Type.Union([Task, Type.Null()]) }),
    errors: ['SESSION_NOT_FOUND'],
  }),
  'model.getSettings': method({
    summary: 'The model settings, and where the API key comes from (never its value).',
    params: NoParams,
    result: Type.Object({ settings: ModelSettingsView }),
  }),
  'model.setSettings': method({
    summary: 'Change model settings (base URL, model name, timeouts, retries). Used from the next task on.',
    params: Type.Object(
      {
        baseUrl: Type.Optional(Type.String({ pattern: '^https?://', maxLength: 2048 })),
        model: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        firstByteTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
        idleTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
        maxRetries: Type.Optional(Type.Integer({ minimum: 0, maximum: 5 })),
        deferToolsAbove: Type.Optional(Type.Integer({ minimum: 0, maximum: 128 })),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    result: Type.Object({ settings: ModelSettingsView }),
    errors: ['STORAGE_FAILED'],
  }),
  'model.setKey': method({
    summary:
      'Save the model API key (write-only): in the OS keychain, or for this daemon run only (a session key applies before a keychain one). ' +
      'An empty value removes the key kept in that store; the next in line applies (the keychain\'s, then the daemon\'s DEEPSEEK_API_KEY).',
    params: Type.Object(
      { value: Type.String({ maxLength: 4096, pattern: NoNul }), storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]) },
      { additionalProperties: false },
    ),
    result: Type.Object({ settings: ModelSettingsView }),
    errors: ['KEYCHAIN_UNAVAILABLE', 'STORAGE_FAILED'],
  }),
  'installs.plan': method({
    summary: 'Plan an npm install: checks the request (exact version), finds Node and npm 12+, and shows the registry, the directory and what it will and will not do. Writes nothing. A plan that cannot succeed is refused before it is shown: an earlier attempt of it unfinished (INSTALL_UNFINISHED) or running (INSTALL_RUNNING), or no room for its service (LIMIT_EXCEEDED).',
    params: Type.Object(
      {
        package: Type.String({ minLength: 1, maxLength: 214, description: 'The full package name (name or @scope/name).' }),
        version: Type.String({ minLength: 1, maxLength: 256, description: 'An exact version: no ranges, tags, URLs, git or file specs.' }),
        bin: Type.String({ minLength: 1, maxLength: 214, description: 'The package\'s JavaScript bin to run.' }),
        args: Type.Optional(Type.Array(Type.String({ maxLength: LIMITS.maxCommandChars, pattern: NoNul }), { maxItems: LIMITS.maxArgs, description: 'Non-sensitive launch arguments.' })),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({ plan: InstallPlanView }),
    errors: ['INVALID_PLAN', 'RUNTIME_NOT_FOUND', 'NPM_TOO_OLD', 'INSTALL_UNFINISHED', 'INSTALL_RUNNING', 'LIMIT_EXCEEDED'],
  }),
  'installs.start': method({
    summary:
      'Ask a human to approve the plan (an approval of kind install), then run it: lock, verify every locked package, npm ci with scripts off, register the server DISABLED. ' +
      'Answers when the attempt ends; progress comes as install.progress events. Disconnecting cancels it.',
    params: Type.Object({ planDigest: Digest }, { additionalProperties: false }),
    result: Type.Object({ attempt: InstallAttempt, service: Service, reused: Type.Boolean({ description: 'True when an earlier successful install of the same plan was used without running npm.' }) }),
    errors: ['PLAN_NOT_FOUND', 'INSTALL_UNFINISHED', 'INSTALL_RUNNING', 'APPROVAL_DENIED', 'CANCELLED', 'TIMEOUT', 'INSTALL_FAILED', 'INSTALL_REJECTED', 'INSTALL_BIN_INVALID', 'RUNTIME_NOT_FOUND', 'NPM_TOO_OLD', 'LIMIT_EXCEEDED'],
  }),
  'installs.list': method({
    summary: 'Every recorded install attempt, newest first.',
    params: NoParams,
    result: Type.Object({ attempts: Type.Array(InstallAttempt) }),
  }),
  'installs.get': method({
    summary: 'One install attempt, with npm\'s log tail.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ attempt: InstallAttempt }),
    errors: ['PLAN_NOT_FOUND'],
  }),
  'installs.cancel': method({
    summary: 'Cancel a running or queued install: npm\'s whole process group is stopped; the attempt ends cancelled.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ cancelled: Type.Boolean({ description: 'False when nothing of that plan was running.' }) }),
  }),
  'installs.discard': method({
    summary: 'Remove an attempt that did not succeed (its directory and record), so the plan can be installed again. A succeeded install is never removed: there is no uninstall.',
    params: Type.Object({ digest: Digest }, { additionalProperties: false }),
    result: Type.Object({ discarded: InstallAttempt }),
    errors: ['PLAN_NOT_FOUND', 'INSTALL_RUNNING', 'INVALID_PARAMS'],
  }),
  'installs.getSettings': method({
    summary: 'Install settings: runtime directories, registry, CA bundle, time limit, whether npm runs sandboxed.',
    params: NoParams,
    result: Type.Object({ settings: InstallSettingsView }),
  }),
  'installs.setSettings': method({
    summary: 'Change install settings. registry and caFile take null to go back to the default.',
    params: Type.Object(
      {
        runtimeDirs: Type.Optional(Type.Array(Type.String({ pattern: '^/', maxLength: 1024 }), { minItems: 1, maxItems: 16 })),
        registry: Type.Optional(Type.Union([Type.String({ pattern: '^https?://', maxLength: 2048 }), Type.Null()])),
        caFile: Type.Optional(Type.Union([Type.String({ pattern: '^/', maxLength: 1024 }), Type.Null()])),
        timeoutMs: Type.Optional(Type.Integer({ minimum: 1000, maximum: 3_600_000 })),
        sandbox: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false, minProperties: 1 },
    ),
    result: Type.Object({ settings: InstallSettingsView }),
    errors: ['STORAGE_FAILED'],
  }),
  'sources.list': method({
    summary: 'The config sources (global settings, enabled plugins, projects) and what the last sync did with every entry.',
    params: NoParams,
    result: SourcesView,
  }),
  'sources.reload': method({
    summary:
      'Read the config sources again and sync them into the registry: changed entries are stopped and disabled, gone ones removed. Services registered by hand are never touched. ' +
      'A source that is there but cannot be used (UNSAFE_FILE, INVALID_CONFIG in report.problems) is skipped, never fatal: the services it gave are kept as they were, and a storage.warning says so.',
    params: NoParams,
    result: SourcesView,
  }),
  'sources.addProject': method({
    summary:
      'Add a project directory whose .mcp.json is a config source, then sync. A .mcp.json that is there but cannot be used is refused and the project not recorded: UNSAFE_FILE (not your own file: another owner, writable by group or others, a symlink), INVALID_CONFIG (unreadable, not JSON, not an object); one not there yet is fine. allowEnv names the variables of the daemon\'s environment its entries may read besides the public ones (HOME, USER, PATH, TMPDIR, ...); given for a project already added, it replaces them (empty: none).',
    params: Type.Object(
      {
        directory: Type.String({ minLength: 1, maxLength: 4096, pattern: '^/' }),
        allowEnv: Type.Optional(Type.Array(EnvName, { maxItems: 64, description: 'Never the daemon\'s own (DEEPSEEK_API_KEY, WISP_*): those are refused whatever is named.' })),
      },
      { additionalProperties: false },
    ),
    result: SourcesView,
    errors: ['INVALID_PARAMS', 'ENV_NOT_ALLOWED', 'UNSAFE_FILE', 'INVALID_CONFIG', 'STORAGE_FAILED'],
  }),
  'sources.removeProject': method({
    summary: 'Remove a project directory from the config sources, then sync (its services are removed).',
    params: Type.Object({ directory: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
    result: SourcesView,
    errors: ['INVALID_PARAMS', 'STORAGE_FAILED'],
  }),
  'services.import': method({
    summary:
      'One-off import of a Claude-Desktop-style (mcpServers) or VS Code-style (servers) file: each entry becomes a service registered by hand (disabled). ' +
      'Env and header values written without ${VAR} go to the secret store (storage), never into mcp-servers.json; values with ${VAR} are kept as written and filled in from the daemon\'s environment at launch (never its own variables: ENV_NOT_ALLOWED). ' +
      'An entry that runs Wisp\'s own gateway (wispctl ... mcp serve) is skipped with code SELF_GATEWAY; an envFile is never read (a warning says so).',
    params: Type.Object(
      {
        content: Type.String({ maxLength: 1024 * 1024, description: 'The file\'s text.' }),
        file: Type.Optional(Type.String({ maxLength: 4096, description: 'Where it came from, for messages.' })),
        storage: Type.Union([Type.Literal('keychain'), Type.Literal('session')]),
      },
      { additionalProperties: false },
    ),
    result: Type.Object({
      imported: Type.Array(Service),
      skipped: Type.Array(Type.Object({ name: Type.String(), reason: Type.String(), code: Type.Optional(ErrorCodeSchema) })),
      warnings: Type.Array(Type.String()),
    }),
    errors: ['INVALID_PARAMS', 'LIMIT_EXCEEDED', 'KEYCHAIN_UNAVAILABLE', 'STORAGE_FAILED'],
  }),
} as const satisfies Record<string, MethodDef>;
