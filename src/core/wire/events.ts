/** The event table: every event a subscribed client receives (`event` notifications). */
import { Type, type Static } from '@sinclair/typebox';
import { LIMITS } from '../limits.js';
import { event } from './define.js';
import { elicitationEvents } from './elicitation.js';
import { InstallAttempt, InstallStep } from './install-shapes.js';
import { Approval, ApprovalOutcome, CallRef, ConnectionState, ErrorCodeSchema, ModelSettingsView, Requester, Service, SessionInfo, Task } from './shapes.js';

/** MCP's log levels, least severe first. */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LogLevel = Type.Unsafe<LogLevel>({ type: 'string', enum: [...LOG_LEVELS] });

export const events = {
  'service.registered': event('service.registered', 'A service was registered (disabled).', { service: Service }),
  'service.updated': event('service.updated', 'A service was edited (and so disabled, its configVersion bumped), or its live network grants changed (services.allowNet: configVersion kept, and it keeps running).', { service: Service }),
  'service.deleted': event('service.deleted', 'A service was removed.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
  }),
  'service.state': event('service.state', 'A service\'s connection state changed.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    connection: ConnectionState,
  }),
  'service.tools': event('service.tools', 'A service\'s tools were discovered (at activation, on list_changed or refresh).', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    toolListVersion: Type.Integer(),
    toolCount: Type.Integer(),
  }),
  'service.login': event('service.login', 'An OAuth login waits for the human: open the authorization URL in a browser.', {
    service: Type.Object({ id: Type.String(), name: Type.String() }),
    authorizationUrl: Type.String(),
    redirectUri: Type.String({ description: 'The loopback listener (127.0.0.1) that receives the callback.' }),
  }),
  'approval.requested': event('approval.requested', 'A call waits for a human: any attached client may answer.', { approval: Approval }),
  'approval.resolved': event('approval.resolved', 'An approval was approved, denied, cancelled or made stale. Without the summary (approval.requested carried it; approvals.get has it).', {
    approval: ApprovalOutcome,
  }),
  ...elicitationEvents,
  'tool.call.started': event('tool.call.started', 'An approved call was sent to its server.', { call: CallRef }),
  'tool.call.progress': event('tool.call.progress', "The server of a running call reported its progress (at most one event a call every 250 ms; its message is the server's text, cut to 500 characters).", {
    call: CallRef,
    progress: Type.Number(),
    total: Type.Union([Type.Number(), Type.Null()]),
    message: Type.Union([Type.String(), Type.Null()]),
  }),
  'service.log': event(
    'service.log',
    `A service's server sent a log message (notifications/message). Its data is the server's JSON, redacted and cut to ${LIMITS.maxLogDataChars.toLocaleString('en')} characters (untrusted text). ` +
      `At most ${LIMITS.maxLogMessagesPerSecond} a service a second: the rest are dropped and counted (dropped), and a second that dropped some ends with an event whose data is null.`,
    {
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      level: LogLevel,
      logger: Type.Union([Type.String(), Type.Null()], { description: 'Untrusted text, cut.' }),
      data: Type.Union([Type.String(), Type.Null()], { description: 'JSON text; null: a count only.' }),
      truncated: Type.Boolean({ description: 'The data was cut (it is then no longer JSON).' }),
      dropped: Type.Integer({ minimum: 0, description: "This service's messages dropped by the rate limit since its last event." }),
      call: Type.Union([CallRef, Type.Null()], { description: 'The one call of this service running then.' }),
    },
  ),
  'service.offerings': event(
    'service.offerings',
    "A service's server said its resource list or prompt list changed (notifications/resources/list_changed, notifications/prompts/list_changed), or one resource some client subscribed to did (notifications/resources/updated: read it again).",
    {
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      changed: Type.Union([Type.Literal('resources'), Type.Literal('prompts'), Type.Literal('resource')]),
      uri: Type.Union([Type.String(), Type.Null()], { description: 'The resource that changed (untrusted text); null for a list.' }),
    },
  ),
  'tool.call.finished': event('tool.call.finished', 'A call succeeded. The result itself goes only to the caller.', {
    call: CallRef,
    durationMs: Type.Integer({ description: 'Milliseconds from sending the call to its server until its answer (0 when it was never sent).' }),
    waitedMs: Type.Integer({ description: 'Milliseconds from the request until the call was sent (or ended unsent): mostly the wait for a human\'s approval.' }),
    truncated: Type.Boolean(),
  }),
  'tool.call.failed': event('tool.call.failed', 'A call failed (denied, stale, error, timeout, cancelled, server gone).', {
    call: Type.Object({
      callId: Type.String(),
      approvalId: Type.Union([Type.String(), Type.Null()]),
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      toolName: Type.String(),
      modelName: Type.String(),
      argumentsDigest: Type.String(),
      requester: Requester,
    }),
    code: ErrorCodeSchema,
    message: Type.String(),
    durationMs: Type.Integer({ description: 'Milliseconds from sending the call to its server until its answer (0 when it was never sent).' }),
    waitedMs: Type.Integer({ description: 'Milliseconds from the request until the call was sent (or ended unsent): mostly the wait for a human\'s approval.' }),
  }),
  'session.created': event('session.created', 'A session was created.', { session: SessionInfo }),
  'session.deleted': event('session.deleted', 'A session was deleted.', { sessionId: Type.String() }),
  'task.state': event('task.state', 'A task started, waits for an approval, runs again, or ended.', { sessionId: Type.String(), task: Task }),
  'model.delta': event('model.delta', 'A piece of the model\'s answer (content) or of its reasoning, as it streams.', {
    sessionId: Type.String(),
    taskId: Type.String(),
    round: Type.Integer(),
    kind: Type.Union([Type.Literal('content'), Type.Literal('reasoning')]),
    text: Type.String(),
  }),
  'model.turn': event('model.turn', 'A model turn ended: its finish reason, usage and the tool calls it proposed.', {
    sessionId: Type.String(),
    taskId: Type.String(),
    round: Type.Integer(),
    finishReason: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
    toolCalls: Type.Array(Type.Object({ id: Type.String(), modelName: Type.String(), arguments: Type.String() })),
  }),
  'install.progress': event('install.progress', 'An install moved to a step (for progress bars); pid is npm\'s process while npm runs.', {
    install: Type.Object({ digest: Type.String(), package: Type.String(), version: Type.String() }),
    step: InstallStep,
    index: Type.Integer({ minimum: 1 }),
    total: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal('started'), Type.Literal('done')]),
    pid: Type.Union([Type.Integer(), Type.Null()]),
  }),
  'install.finished': event('install.finished', 'An install attempt ended (succeeded, failed, cancelled, timed out) or reused an earlier success.', {
    attempt: Type.Omit(InstallAttempt, ['logTail']),
  }),
  'network.refused': event(
    'network.refused',
    'A sandboxed server\'s egress proxy refused a connection: the host and port are not granted (checked before any name is resolved), the name resolved to a loopback, link-local or private address (reached only when granted by address), or too many of its connections were open. The connection is in the audit log too.',
    {
      service: Type.Object({ id: Type.String(), name: Type.String() }),
      host: Type.String({ description: 'As the server asked for it, in canonical form (untrusted text).' }),
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      reason: Type.Union([Type.Literal('not-granted'), Type.Literal('near-address'), Type.Literal('too-many-connections')], {
        description: 'not-granted: no grant covers it (for ask: a human said no, or did not answer in time).',
      }),
      address: Type.Union([Type.String(), Type.Null()], { description: 'near-address: the address the name resolved to; otherwise null.' }),
      message: Type.String(),
      hint: Type.Union([Type.String(), Type.Null()], { description: 'The command that grants it (wispctl mcp allow NAME HOST), when one would.' }),
    },
  ),
  'storage.warning': event(
    'storage.warning',
    'A persisted file, or a record in it, was bad when read (at start): the record was skipped or the file moved aside intact, and the daemon went on. Or a write failed (a full disk): the audit log (tool calls are refused until it can be written) or a service\'s tool pins (that service stopped).',
    {
      file: Type.String({ description: 'The file that was read.' }),
      problem: Type.String({ description: 'What was wrong and what was done (never the file\'s content).' }),
      movedTo: Type.Union([Type.String(), Type.Null()], { description: 'Where the bad file now is, intact; null when it stayed in place.' }),
    },
  ),
  'tools.held': event('tools.held', 'A discovery found tools changed or added since the service\'s tools were pinned: they are held (not callable, not shown to models) until accepted (tools.review, tools.accept).', {
    serviceId: Type.String(),
    serviceName: Type.String(),
    toolListVersion: Type.Integer(),
    added: Type.Array(Type.String(), { description: 'Tool names (untrusted text).' }),
    changed: Type.Array(Type.String(), { description: 'Tool names (untrusted text).' }),
  }),
  'tools.accepted': event('tools.accepted', 'A human accepted held tools: they are pinned as they are now and callable.', {
    serviceId: Type.String(),
    serviceName: Type.String(),
    toolListVersion: Type.Integer(),
    accepted: Type.Array(Type.String()),
  }),
  'model.settings': event('model.settings', 'The model settings changed (model.setSettings, model.setKey): what they are now, and where the key comes from (never its value).', {
    settings: ModelSettingsView,
  }),
  'profile.changed': event('profile.changed', 'A profile was created, changed or removed (profiles.set, profiles.delete): gateways serving it read it again.', { name: Type.String() }),
  'daemon.stopping': event('daemon.stopping', 'The daemon is shutting down; connections close next.', {}),
  'daemon.recovered': event('daemon.recovered', 'At start: the MCP servers a crashed run left running (recorded in the runtime dir) were stopped. A recorded pid that now belongs to another process (its start time differs) is left alone.', {
    servers: Type.Array(
      Type.Object({
        serviceId: Type.String(),
        name: Type.String(),
        pid: Type.Integer({ description: 'The server\'s leader, which was also its process group.' }),
        outcome: Type.Union([Type.Literal('stopped'), Type.Literal('gone'), Type.Literal('not_ours')]),
      }),
    ),
  }),
} as const;

export type EventType = keyof typeof events;
export type WispEvent = { [K in EventType]: Static<(typeof events)[K]> }[EventType];
/** An event before the daemon stamps it with seq and time. */
export type EventPayload = { [K in EventType]: Omit<Static<(typeof events)[K]>, 'seq' | 'at'> }[EventType];
