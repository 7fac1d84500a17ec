import type { WispClient } from '../control/client.js';
import type { Task, WispEvent } from '../core/index.js';
import type { CliIo } from './context.js';
import { allTools } from './pages.js';
import { answerOwnElicitation } from './elicitation-form.js';
import { CANCELLED, Interruption, PromptCancelled, Prompter, answerApproval } from './prompt.js';
import { describeApprovalInline, fitToTerminal, jsonForTerminal, stderrColumns } from './render.js';
import { callEndLine, chatBanner, chatHelpText, chatSessionsText, chatToolsText, streamed, taskEndLine } from './render/chat.js';
import { stdinIsTerminal } from './stdin.js';

export interface RunOptions {
  readonly io: CliIo;
  readonly interactive: boolean;
  readonly reasoning: boolean;
  readonly json: boolean;
  /** The chat's own prompter, so approval questions share the terminal with it. */
  readonly prompter?: Prompter;
}

/** Model output as it streams, and the column it left the cursor at. */
class Stream {
  private column = 0;

  write(raw: string): void {
    const chunk = streamed(raw);
    process.stdout.write(chunk);
    const newline = chunk.lastIndexOf('\n');
    this.column = newline === -1 ? this.column + chunk.length : chunk.length - newline - 1;
  }

  /** Ends a line left open, before a line of our own. */
  endLine(): void {
    if (this.column > 0) this.write('\n');
  }
}

interface TaskView {
  readonly client: WispClient;
  readonly sessionId: string;
  readonly options: RunOptions;
  readonly stream: Stream;
  readonly interruption: Interruption;
  readonly taskId: () => string | undefined;
  readonly finished: (task: Task) => void;
  /** The daemon-side cancel of a question cancelled here: the whole task, until it has ended. */
  readonly cancelTask: () => Promise<unknown>;
}

/** What one event means for the task being run: streamed text, an approval to answer, its end. */
function handleEvent(view: TaskView, event: WispEvent): void {
  const { options, stream, sessionId } = view;
  const { io } = options;
  const taskId = view.taskId();
  if (options.json) {
    if (
      ('sessionId' in event && event.sessionId === sessionId) ||
      (event.type.startsWith('approval.') && 'approval' in event && event.approval.requester.sessionId === sessionId) ||
      ('elicitation' in event && event.elicitation.owners.some((o) => o.sessionId === sessionId))
    ) {
      io.out(jsonForTerminal(event));
    }
  }
  switch (event.type) {
    case 'model.delta':
      if (event.taskId !== taskId || options.json) return;
      if (event.kind === 'content') stream.write(event.text);
      else if (options.reasoning) process.stderr.write(streamed(event.text));
      return;
    case 'approval.requested': {
      const approval = event.approval;
      if (approval.requester.taskId !== taskId) return;
      stream.endLine();
      io.err(fitToTerminal(describeApprovalInline(approval), stderrColumns()));
      answerApproval(approval, {
        client: view.client,
        err: io.err,
        mode: options.interactive ? 'ask' : 'wait',
        interruption: view.interruption,
        cancel: view.cancelTask,
        ...(options.prompter !== undefined ? { prompter: options.prompter } : {}),
      });
      return;
    }
    case 'elicitation.requested': {
      // A server asks the human for input while this task's call runs: asked here like an
      // approval (never by the model; nothing of it goes into the conversation).
      if (taskId === undefined || !event.elicitation.owners.some((o) => o.taskId === taskId)) return;
      stream.endLine();
      answerOwnElicitation(view.client, event.elicitation, {
        ask: options.interactive,
        err: io.err,
        // Ctrl-C at its questions: the server hears cancel, and the request is cancelled as at an approval.
        interrupt: (cleanup) => view.interruption.interrupt(cleanup.catch(() => undefined).then(view.cancelTask)),
        ...(options.prompter !== undefined ? { prompter: options.prompter } : {}),
      });
      return;
    }
    case 'tool.call.finished':
    case 'tool.call.failed':
      if (event.call.requester.taskId === taskId && !options.json) io.err(callEndLine(event));
      return;
    case 'task.state':
      if (event.task.id !== taskId) return;
      if (event.task.state.status !== 'running' && event.task.state.status !== 'awaiting_approval') view.finished(event.task);
      return;
    default:
      return;
  }
}

/**
 * Sends one request and streams the answer until the task ends. Approvals for this task,
 * and servers' requests for input (elicitations) its calls cause, are asked inline on a
 * terminal; elsewhere any client may answer them. Ctrl-C at such a
 * question cancels the task (and so the approval) and ends with PromptCancelled.
 */
export async function runTask(client: WispClient, sessionId: string, text: string, options: RunOptions): Promise<Task> {
  let taskId: string | undefined;
  let finished: (task: Task) => void = () => undefined;
  const ended = new Promise<Task>((resolve) => (finished = resolve));
  const early: WispEvent[] = [];
  const stream = new Stream();
  const view: TaskView = {
    client,
    sessionId,
    options,
    stream,
    interruption: new Interruption(),
    taskId: () => taskId,
    finished: (task) => finished(task),
    cancelTask: () => client.call('sessions.cancel', { id: sessionId }).then(() => ended),
  };
  const off = client.onEvent((event) => {
    if (taskId === undefined) early.push(event);
    else handleEvent(view, event);
  });
  // Ctrl-C while the request runs (no question pending) cancels it, also when it comes before
  // the daemon has started the task (just after Enter): that cancel is sent once the task exists.
  const asked = { cancel: false };
  const cancelRunning = (): void => {
    asked.cancel = true;
    if (taskId !== undefined) void client.call('sessions.cancel', { id: sessionId }).catch(() => undefined);
  };
  options.prompter?.onInterrupt(cancelRunning);
  await client.call('events.subscribe', {});
  try {
    const { task } = await client.call('sessions.send', { id: sessionId, text });
    taskId = task.id;
    if (asked.cancel) cancelRunning();
    for (const event of early.splice(0)) handleEvent(view, event);
    const last = await view.interruption.guard(ended);
    stream.endLine();
    if (!options.json && last.state.status !== 'completed') options.io.err(taskEndLine(last.state));
    return last;
  } finally {
    options.prompter?.onInterrupt(() => undefined);
    off();
    await client.call('events.unsubscribe').catch(() => undefined);
  }
}

/** A line typed at the chat prompt: a chat command (answered here), /quit, or a request. */
async function chatCommand(client: WispClient, id: string, text: string, io: CliIo): Promise<'quit' | 'done' | 'request'> {
  if (text === '/quit' || text === '/exit') return 'quit';
  if (text === '/help' || text === '/?') {
    io.err(chatHelpText());
    return 'done';
  }
  if (text === '/tools') {
    const tools = await allTools(client);
    io.err(chatToolsText(tools));
    return 'done';
  }
  if (text === '/sessions') {
    const { sessions } = await client.call('sessions.list');
    io.err(chatSessionsText(sessions, id));
    return 'done';
  }
  // A word like /halp is a mistyped command, never a request: the model is not asked.
  if (/^\/[A-Za-z?]+$/.test(text)) {
    io.err(`unknown chat command ${text}; /help lists them`);
    return 'done';
  }
  return 'request';
}

/**
 * The interactive loop of `wispctl chat`. Ctrl-C cancels a running request; at an approval
 * question it cancels that request too and comes back here; at the chat's own prompt it
 * ends the chat like any cancelled prompt. End of input (Ctrl-D, a closed pipe) is /quit.
 */
export async function chat(client: WispClient, id: string, io: CliIo): Promise<void> {
  io.err(chatBanner(id));
  const prompter = new Prompter({ terminal: stdinIsTerminal() });
  try {
    for (;;) {
      const line = await prompter.ask('you> ').catch((error: unknown) => {
        if (error instanceof PromptCancelled && error.how === 'eof') return null;
        throw error;
      });
      if (line === null) return;
      const text = line.trim();
      if (text === '') continue;
      const kind = await chatCommand(client, id, text, io);
      if (kind === 'quit') return;
      if (kind === 'done') continue;
      try {
        await runTask(client, id, text, { io, interactive: true, reasoning: false, json: false, prompter });
      } catch (error) {
        if (!(error instanceof PromptCancelled)) throw error;
        io.err(CANCELLED);
      }
    }
  } finally {
    prompter.close();
  }
}
