import type { Task, ToolInfo, WispEvent, SessionInfo } from '../../core/index.js';
import { clean, cleanBlock, showArg } from '../render.js';

/** `wispctl chat` and `send`: streamed model output and the lines around it. */

/** Model output as it streams: its line breaks kept, everything else unsafe shown escaped. */
export function streamed(text: string): string {
  return cleanBlock(text);
}

export function chatBanner(sessionId: string): string {
  return `session ${clean(sessionId)}. Each line is a request. /tools, /sessions, /quit; Ctrl-C cancels a running request.`;
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
