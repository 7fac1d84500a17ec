import { createInterface, type Interface } from 'node:readline/promises';
import type { WispClient } from '../control/client.js';
import type { Approval, Task, WispEvent } from '../core/index.js';
import { allTools } from './pages.js';
import { promptApproval } from './prompt.js';
import { clean, cleanBlock, fitToTerminal, jsonForTerminal, registeredTool, serverClaims, showArg, showJson } from './render.js';

interface Io {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

export interface RunOptions {
  readonly io: Io;
  readonly interactive: boolean;
  readonly reasoning: boolean;
  readonly json: boolean;
  /** The chat's own readline, so approval questions share the terminal with it. */
  readonly rl?: Interface;
}

/**
 * An approval in the chat: what the daemon vouches for on the first line (service, the
 * registered tool, the exact arguments), what the host's own approvals do, then what the
 * server claims, labelled as the server's.
 */
function describe(approval: Approval): string {
  const s = approval.summary;
  return [
    `tool call: ${clean(s.serviceName)}/${showArg(registeredTool(approval))} ${showJson(s.arguments)}`,
    ...(approval.kind !== 'tool_call' && s.title !== null ? [`  what: ${clean(s.title)}`] : []),
    ...serverClaims(approval),
  ].join('\n');
}

/** Model output as it streams: its line breaks kept, everything else unsafe shown escaped. */
function streamed(text: string): string {
  return cleanBlock(text);
}

/**
 * Sends one request and streams the answer until the task ends. Approvals for this task
 * are asked inline on a terminal; elsewhere any client may answer them.
 */
export async function runTask(client: WispClient, sessionId: string, text: string, options: RunOptions): Promise<Task> {
  const { io } = options;
  let taskId: string | undefined;
  let finished: (task: Task) => void = () => undefined;
  const ended = new Promise<Task>((resolve) => (finished = resolve));
  const early: WispEvent[] = [];
  let column = 0;
  const write = (raw: string): void => {
    const chunk = streamed(raw);
    process.stdout.write(chunk);
    const newline = chunk.lastIndexOf('\n');
    column = newline === -1 ? column + chunk.length : chunk.length - newline - 1;
  };
  const handle = (event: WispEvent): void => {
    if (options.json) {
      if (('sessionId' in event && event.sessionId === sessionId) || (event.type.startsWith('approval.') && 'approval' in event && event.approval.requester.sessionId === sessionId)) {
        io.out(jsonForTerminal(event));
      }
    }
    switch (event.type) {
      case 'model.delta':
        if (event.taskId !== taskId || options.json) return;
        if (event.kind === 'content') write(event.text);
        else if (options.reasoning) process.stderr.write(streamed(event.text));
        return;
      case 'approval.requested': {
        const approval = event.approval;
        if (approval.requester.taskId !== taskId) return;
        if (column > 0) write('\n');
        io.err(fitToTerminal(describe(approval), process.stderr.isTTY ? process.stderr.columns : undefined));
        if (!options.interactive) {
          io.err(`waiting for a human: wispctl approve ${clean(approval.id)} (or deny)`);
          return;
        }
        promptApproval(client, approval, io.err, options.rl);
        return;
      }
      case 'tool.call.finished':
        if (event.call.requester.taskId === taskId && !options.json) io.err(`(${clean(event.call.service.name)}/${showArg(event.call.toolName)} ran in ${event.durationMs} ms)`);
        return;
      case 'tool.call.failed':
        if (event.call.requester.taskId === taskId && !options.json) io.err(`(${clean(event.call.service.name)}/${showArg(event.call.toolName)} failed: ${clean(event.code)})`);
        return;
      case 'task.state':
        if (event.task.id !== taskId) return;
        if (event.task.state.status !== 'running' && event.task.state.status !== 'awaiting_approval') finished(event.task);
        return;
      default:
        return;
    }
  };
  const off = client.onEvent((event) => {
    if (taskId === undefined) early.push(event);
    else handle(event);
  });
  await client.call('events.subscribe', {});
  try {
    const { task } = await client.call('sessions.send', { id: sessionId, text });
    taskId = task.id;
    for (const event of early.splice(0)) handle(event);
    const last = await ended;
    if (column > 0) write('\n');
    if (!options.json && last.state.status !== 'completed') {
      const s = last.state;
      io.err(s.status === 'failed' ? `failed: ${cleanBlock(s.message, '  ')} (${clean(s.code)})` : 'status' in s && 'reason' in s ? `${s.status}: ${clean(s.reason)}` : s.status);
    }
    return last;
  } finally {
    off();
    await client.call('events.unsubscribe').catch(() => undefined);
  }
}

/** The interactive loop of `wispctl chat`. */
export async function chat(client: WispClient, sessionId: string | undefined, io: Io): Promise<void> {
  const id = sessionId ?? (await client.call('sessions.create', { title: 'chat' })).session.id;
  io.err(`session ${clean(id)}. Each line is a request. /tools, /sessions, /quit; Ctrl-C cancels a running request.`);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
  let running = false;
  rl.on('SIGINT', () => {
    if (running) void client.call('sessions.cancel', { id });
    else rl.close();
  });
  const closed = new Promise<void>((resolve) => rl.once('close', resolve));
  try {
    for (;;) {
      // End of input (Ctrl-D, or a closed pipe) ends the chat like /quit.
      const line = await Promise.race([rl.question('you> ').catch(() => null), closed.then(() => null)]);
      if (line === null) return;
      const text = line.trim();
      if (text === '') continue;
      if (text === '/quit' || text === '/exit') return;
      if (text === '/tools') {
        const tools = await allTools(client);
        io.err(tools.length === 0 ? 'no active tools' : tools.map((t) => `${clean(t.serviceName)}/${showArg(t.name)}  ${clean(t.modelName)}`).join('\n'));
        continue;
      }
      if (text === '/sessions') {
        const { sessions } = await client.call('sessions.list');
        io.err(sessions.map((s) => `${clean(s.id)}  ${clean(s.title)}${s.id === id ? '  (this one)' : ''}`).join('\n'));
        continue;
      }
      running = true;
      try {
        await runTask(client, id, text, { io, interactive: true, reasoning: false, json: false, rl });
      } finally {
        running = false;
      }
    }
  } finally {
    rl.close();
  }
}
