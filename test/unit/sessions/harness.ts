import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Approvals, type ApprovalAnnouncement } from '../../../src/approvals/index.js';
import { WispError, isFinished, type Task } from '../../../src/core/index.js';
import { Supervisor, ToolCalls, type McpEvent, type StoredService } from '../../../src/mcp/index.js';
import type { ModelSettings } from '../../../src/model/index.js';
import { Sessions, TranscriptFiles, type HostActions, type SessionEvent, type SessionsOptions } from '../../../src/sessions/index.js';
import { InMemoryServers, storedService, tool, toolServer, type ToolServer } from '../mcp/in-memory.js';

export type Published = SessionEvent | McpEvent | ApprovalAnnouncement;

/** Everything the parts published, in order, with a way to wait for an event (already published or still to come). */
export class Events {
  readonly all: Published[] = [];
  private waiters: { match: (e: Published) => boolean; resolve: (e: Published) => void }[] = [];

  readonly publish = (event: Published): void => {
    this.all.push(event);
    this.waiters = this.waiters.filter((w) => !w.match(event) || (w.resolve(event), false));
  };

  when<E extends Published>(match: (e: Published) => e is E): Promise<E>;
  when(match: (e: Published) => boolean): Promise<Published>;
  when(match: (e: Published) => boolean): Promise<Published> {
    const seen = this.all.find(match);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  /** The task as it was announced once it ended. */
  async ended(taskId: string): Promise<Task> {
    const event = await this.when((e): e is Extract<SessionEvent, { kind: 'task.changed' }> => e.kind === 'task.changed' && e.task.id === taskId && isFinished(e.task.state));
    return event.task;
  }

  /** The id of the approval the task waits on, once it waits. */
  async awaiting(taskId: string, after = 0): Promise<string> {
    let count = 0;
    const event = await this.when(
      (e): e is Extract<SessionEvent, { kind: 'task.changed' }> => e.kind === 'task.changed' && e.task.id === taskId && e.task.state.status === 'awaiting_approval' && count++ >= after,
    );
    if (event.task.state.status !== 'awaiting_approval') throw new Error('unreachable');
    return event.task.state.approvalId;
  }

  /** The states a task was announced in, as status names. */
  states(taskId: string): string[] {
    return this.all.flatMap((e) => (e.kind === 'task.changed' && e.task.id === taskId ? [e.task.state.status] : []));
  }
}

export interface Harness {
  readonly sessions: Sessions;
  readonly approvals: Approvals;
  readonly supervisor: Supervisor;
  readonly events: Events;
  /** The in-memory server of the service "tools": what it received. */
  readonly server: ToolServer;
  /** Its tools: push one and call listChanged() to change them under a running daemon. */
  readonly tools: ReturnType<typeof tool>[];
  readonly config: StoredService;
  /** The services the host actions know, by id. */
  readonly registry: Map<string, StoredService>;
  readonly transcriptsDir: string;
  /** The model name of a tool of the service "tools". */
  readonly modelName: (toolName: string) => string;
  readonly listChanged: () => Promise<void>;
  /** A second Sessions over the same transcripts, as a restarted daemon would build it. */
  readonly reopen: () => Sessions;
  readonly close: () => Promise<void>;
}

/** The daemon's host actions, as small real functions over a map of services and the supervisor. */
function hostActions(registry: Map<string, StoredService>, supervisor: Supervisor): HostActions {
  const find = (ref: { id?: string; name?: string }): StoredService => {
    const found = [...registry.values()].find((c) => c.id === ref.id || c.name === ref.name);
    if (found === undefined) throw new WispError('SERVICE_NOT_FOUND', `no service ${ref.id ?? ref.name ?? ''}`);
    return found;
  };
  return {
    listServices: () => [...registry.values()].map((c) => ({ id: c.id, name: c.name, state: supervisor.state(c.id).status, tools: supervisor.tools(c.id).length })),
    describe: (ref) => {
      const c = find(ref);
      return { id: c.id, name: c.name, command: c.command, args: [...c.args], cwd: c.cwd, env: [], transport: 'stdio', url: null, headers: [], templates: {}, fromEnvironment: [], sandbox: { status: 'legacy' as const }, media: false, configVersion: c.configVersion };
    },
    sandboxSees: () => Promise.resolve(null),
    register: (input) => {
      const c = storedService(input.name, { command: input.command, args: input.args, cwd: input.cwd ?? null, enabled: false });
      registry.set(c.id, c);
      return Promise.resolve({ id: c.id, name: c.name, configVersion: c.configVersion });
    },
    activate: (id, configVersion, signal) => supervisor.activate(find({ id }), configVersion, signal),
    planInstall: () => Promise.reject(new WispError('INVALID_CONFIG', 'installing is not offered in these tests')),
    install: () => Promise.reject(new WispError('INVALID_CONFIG', 'installing is not offered in these tests')),
  };
}

/**
 * The real parts a daemon wires for sessions (see daemon/compose.ts): a supervisor over
 * in-memory MCP servers, approvals, the call pipeline, transcripts in a temp dir, and the
 * model at `settings.baseUrl` (the mock DeepSeek). The service "tools" (echo) is active.
 */
export async function harness(settings: ModelSettings, more: { extra?: InMemoryServers; apiKey?: () => Promise<string> } = {}): Promise<Harness> {
  const tools = [tool('echo', { text: { type: 'string' } }, ['text'])];
  const server = toolServer(tools, (_name, args) => ({ content: [{ type: 'text', text: String(args.text) }] }));
  const servers = (more.extra ?? new InMemoryServers()).add('tools', () => server.server);
  const events = new Events();
  const supervisor = new Supervisor({
    version: '0.0.0-test',
    ladder: { stdinGraceMs: 1000, termGraceMs: 1000 },
    searchPath: undefined,
    publish: events.publish,
    redact: (text) => text,
    now: () => new Date(),
    onStop: (serviceId, reason) => sessions.cancelUsing(serviceId, reason),
    transports: servers.factory,
  });
  const approvals = new Approvals(events.publish);
  const toolCalls = new ToolCalls({ supervisor, approvals, publish: events.publish, audit: () => Promise.resolve(true), redact: (value) => value, now: () => new Date() });
  const home = mkdtempSync(path.join(os.tmpdir(), 'wisp-sessions-'));
  const transcriptsDir = path.join(home, 'sessions');
  const registry = new Map<string, StoredService>();
  const options: SessionsOptions = {
    transcripts: new TranscriptFiles(transcriptsDir),
    toolCalls,
    approvals,
    host: hostActions(registry, supervisor),
    activeTools: () => supervisor.tools(),
    settings: () => settings,
    apiKey: more.apiKey ?? (() => Promise.resolve('sk-unit-test')),
    redact: (value) => value,
    publish: events.publish,
    now: () => new Date(),
    log: () => undefined,
  };
  const sessions = new Sessions(options);
  const config = storedService('tools');
  registry.set(config.id, config);
  const state = await supervisor.activate(config, 1, new AbortController().signal);
  if (state.status !== 'active') throw new Error(`the in-memory service did not start: ${JSON.stringify(state)}`);
  return {
    sessions,
    approvals,
    supervisor,
    events,
    server,
    tools,
    config,
    registry,
    transcriptsDir,
    modelName: (toolName) => {
      const found = supervisor.tools(config.id).find((t) => t.name === toolName);
      if (found === undefined) throw new Error(`no active tool ${toolName}`);
      return found.modelName;
    },
    listChanged: () => server.server.server.sendToolListChanged(),
    reopen: () => new Sessions(options),
    close: async () => {
      await sessions.stopAll();
      await supervisor.stopAll();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
