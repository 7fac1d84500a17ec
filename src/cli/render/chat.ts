import type { Task, ToolInfo, WispEvent, SessionInfo } from '../../core/index.js';
import { clean, cleanBlock, showArg } from '../render.js';

/** `wispctl chat` and `send`: streamed model output and the lines around it. */

/** Model output as it streams: its line breaks kept, everything else unsafe shown escaped. */
export function streamed(text: string): string {
  return cleanBlock(text);
}

export function chatBanner(sessionId: string): string {
  return `session ${clean(sessionId)}. Each line is a request. /help, /tools, /sessions, /quit; Ctrl-C cancels a running request.`;
}

/** /help: the chat's own commands (answered here; none of them reaches the model). */
export function chatHelpText(): string {
  return [
    'chat commands (answered here, never sent to the model):',
    '  /help      this list',
    '  /tools     the active tools: service/tool and the name the model sees',
    '  /sessions  the sessions (this one marked)',
    '  /quit      end the chat (also /exit, or Ctrl-D)',
    'Any other line is a request to the model. Ctrl-C cancels a running request; at a tool',
    'approval it cancels that request; at the you> prompt it ends the chat.',
  ].join('\n');
}

type CallEnd = Extract<WispEvent, { type: 'tool.call.finished' | 'tool.call.failed' }>;

/** A tool call of the task ended: `(tools/echo ran in 12 ms)`, `(tools/echo failed: TIMEOUT)`. */
export function callEndLine(event: CallEnd): string {
  const call = `${clean(event.call.service.name)}/${showArg(event.call.toolName)}`;
  return event.type === 'tool.call.finished' ? `(${call} ran in ${event.durationMs} ms)` : `(${call} failed: ${clean(event.code)})`;
}

/** How a task that did not complete ended. */
export function taskEndLine(state: Task['state']): string {
  if (state.status === 'failed') return `failed: ${cleanBlock(state.message, '  ')} (${clean(state.code)})`;
  return 'reason' in state ? `${state.status}: ${clean(state.reason)}` : state.status;
}

export function chatToolsText(tools: readonly ToolInfo[]): string {
  return tools.length === 0 ? 'no active tools' : tools.map((t) => `${clean(t.serviceName)}/${showArg(t.name)}  ${clean(t.modelName)}`).join('\n');
}

export function chatSessionsText(sessions: readonly SessionInfo[], current: string): string {
  return sessions.map((s) => `${clean(s.id)}  ${clean(s.title)}${s.id === current ? '  (this one)' : ''}`).join('\n');
}
