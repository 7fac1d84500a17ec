import { randomUUID } from 'node:crypto';
import { WispError, type ConnectionState, type Service, type SessionInfo, type Task, type TaskState, type TranscriptMessage } from '../../core/index.js';
import type { DemoInstalls } from './installs.js';
import { optionalText, text, type Params } from './params.js';
import { FORECAST, activate } from './services.js';
import { MODEL_CLIENT_ID, hex, now, type DemoWorld } from './world.js';

/** The package the demo's model offers to install: made up, never looked up. */
export const DEMO_PACKAGE = { package: '@wisp-demo/weather-mcp', version: '1.0.0', bin: 'weather-mcp' };

interface DemoSession {
  info: SessionInfo;
  messages: TranscriptMessage[];
  tasks: Task[];
  /** The running task's approval, to cancel with the task. */
  waiting: string | null;
  cancelled: boolean;
  /** The running task's model rounds so far. */
  round: number;
}

/** Ends a task's script at once (cancel, delete). */
class Stopped extends Error {}

/**
 * The demo's chat: a scripted model (no network, no key) that walks the seeds' QA flow. With
 * nothing installed it asks to install the weather server; installed but not active, it asks
 * (separately) to activate it; active, it asks to call its tool. Every step waits for an
 * approval on any page, as a real task does.
 */
export class DemoChat {
  private readonly sessions = new Map<string, DemoSession>();

  constructor(
    private readonly world: DemoWorld,
    private readonly installs: DemoInstalls,
  ) {}

  create(p: Params): { session: SessionInfo } {
    if (this.sessions.size >= 64) throw new WispError('LIMIT_EXCEEDED', 'the demo keeps at most 64 sessions: delete one');
    const at = now();
    const info: SessionInfo = { id: randomUUID(), title: optionalText(p, 'title', 200) ?? 'demo session', createdAt: at, updatedAt: at, messageCount: 0, lastTask: null };
    this.sessions.set(info.id, { info, messages: [], tasks: [], waiting: null, cancelled: false, round: 0 });
    this.world.emit({ type: 'session.created', session: info });
    return { session: info };
  }

  list(): { sessions: SessionInfo[] } {
    return { sessions: [...this.sessions.values()].map((s) => s.info) };
  }

  get(p: Params): { session: SessionInfo; messages: TranscriptMessage[]; tasks: Task[]; omittedMessages: number; omittedTasks: number } {
    const s = this.session(p);
    return { session: s.info, messages: s.messages, tasks: s.tasks, omittedMessages: 0, omittedTasks: 0 };
  }

  delete(p: Params): { deleted: string } {
    const s = this.session(p);
    this.stop(s, 'the session was deleted');
    this.sessions.delete(s.info.id);
    this.world.emit({ type: 'session.deleted', sessionId: s.info.id });
    return { deleted: s.info.id };
  }

  cancel(p: Params): { task: Task | null } {
    const s = this.session(p);
    const last = s.tasks.at(-1) ?? null;
    if (last === null || !running(last)) return { task: last };
    this.stop(s, 'cancelled by the user');
    return { task: this.setState(s, last, { status: 'cancelled', reason: 'cancelled by the user' }) };
  }

  send(p: Params): { task: Task } {
    const s = this.session(p);
    const request = text(p, 'text', 32_000);
    const last = s.tasks.at(-1);
    if (last !== undefined && running(last)) throw new WispError('TASK_RUNNING', 'a request is still running in this session');
    s.cancelled = false;
    s.round = 0;
    this.push(s, { role: 'user', content: request });
    const task: Task = { id: randomUUID(), sessionId: s.info.id, state: { status: 'running' }, startedAt: now(), endedAt: null, rounds: 0, tools: this.activeTools() };
    s.tasks = [...s.tasks.slice(-63), task];
    this.world.emit({ type: 'task.state', sessionId: s.info.id, task });
    void this.script(s, task).then(
      async (answer) => {
        await this.stream(s, task, this.nextRound(s), 'Answer the user.', answer);
        this.finish(s, task, answer);
      },
      (error: unknown) => {
        if (!(error instanceof Stopped)) this.setState(s, task, { status: 'failed', code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) });
      },
    );
    return { task };
  }

  private session(p: Params): DemoSession {
    const s = this.sessions.get(text(p, 'id', 128));
    if (s === undefined) throw new WispError('SESSION_NOT_FOUND', 'no such session (demo)');
    return s;
  }

  private stop(s: DemoSession, reason: string): void {
    s.cancelled = true;
    if (s.waiting !== null) this.world.cancel(s.waiting, reason);
  }

  private activeTools(): string[] {
    return [...this.world.tools.values()].flat().map((t) => t.modelName);
  }

  private nextRound(s: DemoSession): number {
    s.round += 1;
    return s.round;
  }

  private push(s: DemoSession, message: TranscriptMessage): void {
    s.messages = [...s.messages.slice(-499), message];
    s.info = { ...s.info, messageCount: s.info.messageCount + 1, updatedAt: now() };
  }

  private setState(s: DemoSession, task: Task, state: TaskState): Task {
    const ended = state.status !== 'running' && state.status !== 'awaiting_approval';
    const next: Task = { ...task, state, endedAt: ended ? now() : null, rounds: s.round };
    s.tasks = s.tasks.map((t) => (t.id === task.id ? next : t));
    if (ended) s.info = { ...s.info, lastTask: next };
    this.world.emit({ type: 'task.state', sessionId: s.info.id, task: next });
    return next;
  }

  private finish(s: DemoSession, task: Task, answer: string): void {
    if (s.cancelled) return;
    this.push(s, { role: 'assistant', content: answer });
    this.setState(s, s.tasks.find((t) => t.id === task.id) ?? task, { status: 'completed', finishReason: 'stop' });
  }

  /** One model round: its reasoning, then its words, streamed a few characters at a time. */
  private async stream(s: DemoSession, task: Task, round: number, reasoning: string, content: string): Promise<void> {
    for (const [kind, words] of [['reasoning', reasoning], ['content', content]] as const) {
      for (const piece of words.match(/.{1,12}/gs) ?? []) {
        await this.world.later(25);
        checkGoing(s);
        this.world.emit({ type: 'model.delta', sessionId: s.info.id, taskId: task.id, round, kind, text: piece });
      }
    }
  }

  /** The model asks for a tool; the task waits for the approval; the answer goes in the transcript. */
  private async toolRound(s: DemoSession, task: Task, words: { reasoning: string; content: string }, call: { name: string; args: Record<string, unknown>; ask: () => { approval: { id: string }; answer: Promise<boolean> }; run: () => Promise<string> }): Promise<boolean> {
    const round = this.nextRound(s);
    await this.stream(s, task, round, words.reasoning, words.content);
    const id = `call_${round}_${task.id.slice(0, 8)}`;
    this.push(s, { role: 'assistant', content: words.content, reasoning_content: words.reasoning, tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] });
    const { approval, answer } = call.ask();
    s.waiting = approval.id;
    this.setState(s, task, { status: 'awaiting_approval', approvalId: approval.id });
    const approved = await answer;
    s.waiting = null;
    checkGoing(s);
    this.setState(s, task, { status: 'running' });
    const result = approved ? await call.run() : 'APPROVAL_DENIED: the user denied this request';
    checkGoing(s);
    this.push(s, { role: 'tool', tool_call_id: id, content: result });
    return approved;
  }

  private installed(): Service | undefined {
    return [...this.world.services.values()].find((sv) => sv.origin.kind === 'install' && sv.origin.package === DEMO_PACKAGE.package);
  }

  private async script(s: DemoSession, task: Task): Promise<string> {
    const requester = { clientId: MODEL_CLIENT_ID, sessionId: s.info.id, taskId: task.id };
    let service = this.installed();
    if (service === undefined) {
      const args = { ...DEMO_PACKAGE, args: [] };
      const approved = await this.toolRound(s, task, {
        reasoning: 'Nothing that gives weather is registered. I will ask to install a weather server, pinned to an exact version.',
        content: `I can install ${DEMO_PACKAGE.package}@${DEMO_PACKAGE.version} for you; it will be registered disabled.`,
      }, {
        name: 'mcp_install_npm',
        args,
        ask: () => {
          const { plan } = this.installs.plan(args);
          const started = this.installs.start({ planDigest: plan.digest }, requester);
          return this.pendingOf(plan.digest, started);
        },
        run: () => Promise.resolve(`installed (demo: nothing was downloaded) and registered DISABLED as ${this.installed()?.name ?? '?'}; starting it needs its own approval`),
      });
      if (!approved) return 'Not installed: you denied the install.';
      service = this.installed();
      if (service === undefined) return 'The install did not register a service.';
    }
    if (service.connection.status !== 'active') {
      const shown = service;
      const approved = await this.toolRound(s, task, {
        reasoning: `${shown.name} is registered but disabled. Starting it needs its own approval.`,
        content: `${shown.name} is installed and disabled. I am asking you to trust and start it.`,
      }, {
        name: 'mcp_activate_service',
        args: { id: shown.id },
        ask: () => this.world.ask('activation', requester, { serviceId: shown.id, configVersion: shown.configVersion }, {
          serviceName: shown.name,
          toolName: 'mcp_activate_service',
          modelName: 'mcp_activate_service',
          title: 'Trust and start this program (demo: nothing runs)',
          arguments: { command: shown.command, args: shown.args, cwd: shown.cwd, env: shown.env, configVersion: shown.configVersion },
          annotations: null,
        }),
        run: async () => describe((await activate(this.world, this.world.service({ id: shown.id }), shown.configVersion)).connection),
      });
      if (!approved) return `${shown.name} stays disabled: you denied the activation.`;
      const after = this.world.service({ id: shown.id });
      return after.connection.status === 'active'
        ? `${after.name} is active with ${after.connection.toolCount} tool (${FORECAST.name}). It is offered from your next request: ask me again.`
        : `${after.name} did not start.`;
    }
    return this.forecast(s, task, service, requester);
  }

  private async forecast(s: DemoSession, task: Task, service: Service, requester: { clientId: string; sessionId: string; taskId: string }): Promise<string> {
    const tool = (this.world.tools.get(service.id) ?? []).find((t) => t.name === FORECAST.name);
    if (tool === undefined || service.connection.status !== 'active') return 'The weather tool is not active.';
    const args = { city: 'Lisbon' };
    const { generation, toolListVersion } = service.connection;
    const binding = { serviceId: service.id, generation, toolListVersion, toolName: tool.name, argumentsDigest: hex(JSON.stringify(args), 64) };
    let approvalId = '';
    const callId = randomUUID();
    const ref = () => ({ callId, approvalId, service: { id: service.id, name: service.name }, toolName: tool.name, modelName: tool.modelName, argumentsDigest: binding.argumentsDigest, requester });
    const approved = await this.toolRound(s, task, { reasoning: 'The weather tool is active now: I will call it.', content: 'Let me look up the forecast.' }, {
      name: tool.modelName,
      args,
      ask: () => {
        const asked = this.world.ask('tool_call', requester, binding, { serviceName: service.name, toolName: tool.name, modelName: tool.modelName, title: tool.title, arguments: args, annotations: tool.annotations });
        approvalId = asked.approval.id;
        return asked;
      },
      run: async () => {
        this.world.emit({ type: 'tool.call.started', call: ref() });
        await this.world.later(200);
        this.world.emit({ type: 'tool.call.finished', call: ref(), durationMs: 200, waitedMs: 0, truncated: false });
        return FORECAST_RESULT;
      },
    });
    if (!approved) {
      this.world.emit({ type: 'tool.call.failed', call: ref(), code: 'APPROVAL_DENIED', message: 'the call was denied', durationMs: 0, waitedMs: 0 });
      return 'You denied the call, so I did not look up the weather.';
    }
    return `The forecast tool says: ${FORECAST_RESULT}`;
  }

  /** The install approval the demo's installer asked (the newest for that plan). */
  private pendingOf(digest: string, started: Promise<unknown>): { approval: { id: string }; answer: Promise<boolean> } {
    const open = [...this.world.approvals.values()].reverse().find((o) => o.approval.binding.planDigest === digest && o.approval.state.status === 'pending');
    if (open === undefined) throw new WispError('INTERNAL_ERROR', 'the demo install asked nothing');
    return { approval: open.approval, answer: started.then(() => true, () => false) };
  }
}

const FORECAST_RESULT = 'Tomorrow in Lisbon: sunny, 21 °C (made-up demo data).';

function describe(c: ConnectionState): string {
  return c.status === 'active' ? `active with ${c.toolCount} tool${c.toolCount === 1 ? '' : 's'}; they are offered from the next request` : c.status === 'failed' ? `failed ${c.code}: ${c.message}` : c.status;
}

/** After each wait: a cancelled or deleted session's script ends there. */
function checkGoing(s: DemoSession): void {
  if (s.cancelled) throw new Stopped();
}

function running(task: Task): boolean {
  return task.state.status === 'running' || task.state.status === 'awaiting_approval';
}
