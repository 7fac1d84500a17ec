import { randomUUID } from 'node:crypto';
import type { Approvals } from '../approvals/index.js';
import { LIMITS, WispError, isFinished, nextTaskState, type SessionInfo, type Task } from '../core/index.js';
import type { StorageProblem } from '../util/index.js';
import type { CatalogTool, ToolCalls } from '../mcp/index.js';
import type { ChatMessage, ModelSettings } from '../model/index.js';
import type { HostActions } from './host-tools.js';
import type { Session } from './task-run.js';
import type { SessionEvent } from './events.js';
import type { TranscriptFiles, TranscriptRecord } from './transcript.js';

export interface SessionsOptions {
  readonly transcripts: TranscriptFiles;
  readonly toolCalls: ToolCalls;
  readonly approvals: Approvals;
  /** What the model's host tools do once approved. */
  readonly host: HostActions;
  /** The active tools right now: a task takes its snapshot from here when it starts. */
  readonly activeTools: () => CatalogTool[];
  readonly settings: () => ModelSettings;
  /** Resolves the API key (keychain, session or environment), or throws MODEL_NO_KEY. */
  readonly apiKey: () => Promise<string>;
  /** Known secret values out of what is sent to the model (messages and tool definitions). */
  readonly redact: <T>(value: T) => T;
  /** Where sessions, tasks and model output are announced. */
  readonly publish: (event: SessionEvent) => void;
  readonly now: () => Date;
  readonly log: (obj: object, msg: string) => void;
}

/**
 * Model sessions and their tasks. A task is one user request: it captures the active tools
 * when it starts and keeps that snapshot for all its rounds; each tool call the model makes
 * goes through the same approval and call pipeline as tools.call.
 */
export class Sessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: SessionsOptions) {}

  /** Reads transcripts back; a task that was running when the daemon stopped is marked interrupted. */
  /** Loads the transcripts; what could not be used is returned (and skipped), never fatal. */
  async load(): Promise<StorageProblem[]> {
    const problems: StorageProblem[] = [];
    for (const { sessionId, records } of await this.options.transcripts.readAll(problems)) {
      const file = this.options.transcripts.file(sessionId);
      const head = records.find((r) => r.type === 'session');
      if (head?.type !== 'session') {
        problems.push({ file, problem: 'has no valid session record: the session is not loaded', movedTo: null });
        continue;
      }
      const session: Session = { id: sessionId, title: head.title, createdAt: head.createdAt, updatedAt: head.createdAt, messages: [], tasks: [], running: undefined };
      for (const record of records) {
        if (record.type === 'message') {
          session.messages.push(record.message);
          session.updatedAt = record.at;
        } else if (record.type === 'task') {
          const index = session.tasks.findIndex((t) => t.id === record.task.id);
          if (index === -1) session.tasks.push(record.task);
          else session.tasks[index] = record.task;
          session.updatedAt = record.at;
        }
      }
      const interrupted: TranscriptRecord[] = [];
      for (const [index, task] of session.tasks.entries()) {
        if (!isFinished(task.state)) {
          const ended: Task = { ...task, state: nextTaskState(task.state, { type: 'interrupt', reason: 'the daemon stopped while it ran' }), endedAt: this.at() };
          session.tasks[index] = ended;
          interrupted.push({ type: 'task', at: this.at(), task: ended });
        }
      }
      try {
        await this.options.transcripts.append(sessionId, interrupted);
      } catch (error) {
        problems.push({ file, problem: `could not record the interrupted tasks (${(error as NodeJS.ErrnoException).code ?? String(error)})`, movedTo: null });
      }
      this.sessions.set(sessionId, session);
    }
    return problems;
  }

  async create(title: string | undefined): Promise<SessionInfo> {
    const at = this.at();
    const session: Session = { id: randomUUID(), title: title ?? 'untitled', createdAt: at, updatedAt: at, messages: [], tasks: [], running: undefined };
    await this.options.transcripts.append(session.id, [{ type: 'session', id: session.id, title: session.title, createdAt: at }]);
    this.sessions.set(session.id, session);
    const info = this.info(session);
    this.options.publish({ kind: 'session.created', session: info });
    return info;
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => this.info(s));
  }

  /**
   * A session with its most recent messages and tasks, as many as fit in one reply page
   * (LIMITS.maxPageBytes each): a long transcript must not make the reply too large to
   * send. `omittedMessages`/`omittedTasks` count the older ones left out.
   */
  get(id: string): { session: SessionInfo; messages: ChatMessage[]; tasks: Task[]; omittedMessages: number; omittedTasks: number } {
    const session = this.find(id);
    const messages = newestThatFit(session.messages, LIMITS.maxPageBytes);
    const tasks = newestThatFit(session.tasks, LIMITS.maxPageBytes / 4);
    return {
      session: this.info(session),
      messages,
      tasks,
      omittedMessages: session.messages.length - messages.length,
      omittedTasks: session.tasks.length - tasks.length,
    };
  }

  async delete(id: string): Promise<void> {
    const session = this.find(id);
    await this.cancel(id, 'the session was deleted');
    this.sessions.delete(id);
    await this.options.transcripts.remove(id);
    this.options.publish({ kind: 'session.deleted', sessionId: session.id });
  }

  /** Starts a task; it runs in the background and reports through events. */
  async send(id: string, text: string, clientId: string): Promise<Task> {
    // Loaded with the first task: the model client and the host tools (their schemas are
    // TypeBox's) are not needed before, and most daemon runs start no task.
    const { TaskRun } = await import('./task-run.js');
    const session = this.find(id);
    if (session.running !== undefined) {
      throw new WispError('TASK_RUNNING', `session ${id} is already running task ${session.running.task.id}`, { taskId: session.running.task.id });
    }
    // The snapshot: the tools active now, for every round of this task, in one fixed order
    // (by model name, not by when their services were activated), so the tools in every
    // request are the same bytes while the catalog is the same: the provider's prefix cache
    // stays warm across tasks, restarts and re-activations.
    const active = [...this.options.activeTools()].sort((a, b) => (a.modelName < b.modelName ? -1 : a.modelName > b.modelName ? 1 : 0));
    const snapshot = new Map(active.map((tool) => [tool.modelName, tool]));
    const task: Task = { id: randomUUID(), sessionId: id, state: { status: 'running' }, startedAt: this.at(), endedAt: null, rounds: 0, tools: [...snapshot.keys()] };
    const user: ChatMessage = { role: 'user', content: text };
    session.messages.push(user);
    session.tasks.push(task);
    await this.options.transcripts.append(id, [
      { type: 'message', taskId: task.id, at: this.at(), message: user },
      { type: 'task', at: this.at(), task },
    ]);
    const controller = new AbortController();
    const done = new TaskRun(this.options, session, task, snapshot, clientId, controller.signal).run();
    session.running = { task, controller, done, services: new Set([...snapshot.values()].map((tool) => tool.serviceId)) };
    this.options.publish({ kind: 'task.changed', sessionId: id, task });
    return task;
  }

  async cancel(id: string, reason = 'cancelled by a client'): Promise<Task | null> {
    const session = this.find(id);
    const running = session.running;
    if (running === undefined) return null;
    running.controller.abort(new WispError('CANCELLED', reason));
    await running.done;
    return session.tasks.find((t) => t.id === running.task.id) ?? null;
  }

  /**
   * A service is stopping (disabled, edited, deleted): every running task that was given its
   * tools ends as cancelled with `reason`, its pending approval and running call with it.
   * Synchronous, so it happens before the service's connection is closed.
   */
  cancelUsing(serviceId: string, reason: string): void {
    for (const session of this.sessions.values()) {
      const running = session.running;
      if (running?.services.has(serviceId) === true) running.controller.abort(new WispError('CANCELLED', reason));
    }
  }

  /** Daemon shutdown: every running task is cancelled (and so its approvals and calls). */
  async stopAll(): Promise<void> {
    await Promise.all([...this.sessions.keys()].map((id) => this.cancel(id, 'the daemon is stopping')));
  }

  private find(id: string): Session {
    const session = this.sessions.get(id);
    if (session === undefined) throw new WispError('SESSION_NOT_FOUND', `no session with id ${id}`, { id });
    return session;
  }

  private info(session: Session): SessionInfo {
    return {
      id: session.id,
      title: session.title,
      createdAt: session.createdAt,
      updatedAt: session.updatedAt,
      messageCount: session.messages.length,
      lastTask: session.tasks.at(-1) ?? null,
    };
  }

  private at(): string {
    return this.options.now().toISOString();
  }
}

/** The newest items whose JSON fits in `budget` bytes (at least none; in their order). */
function newestThatFit<T>(items: readonly T[], budget: number): T[] {
  let bytes = 0;
  let first = items.length;
  while (first > 0) {
    const size = Buffer.byteLength(JSON.stringify(items[first - 1]));
    if (bytes + size > budget) break;
    bytes += size;
    first -= 1;
  }
  return items.slice(first);
}
