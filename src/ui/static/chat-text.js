// The chat's words, as wispctl chat prints them (src/cli/render/chat.ts). Plain strings; one-line
// ones escaped here with wispctl's clean(), the transcript's text by html.js as every page text.
import { clean } from '../../core/index.js';

/** A tool call of the task ended: `(tools/echo ran in 12 ms)`, `(tools/echo failed: TIMEOUT)`. */
export function callEndLine(event) {
  const name = `${event.call.service.name}/${event.call.toolName}`;
  return clean(event.type === 'tool.call.finished' ? `(${name} ran in ${event.durationMs} ms)` : `(${name} failed: ${event.code})`);
}

/** How a task that did not complete ended (taskEndLine). */
export function taskEndLine(state) {
  if (state.status === 'failed') return clean(`failed: ${state.message} (${state.code})`);
  return clean('reason' in state ? `${state.status}: ${state.reason}` : state.status);
}

/** One transcript message as [who, text] rows: what was said, the tool calls asked for, a tool's result. */
export function messageRows(m) {
  switch (m.role) {
    case 'user':
      return [['you', m.content ?? '']];
    case 'assistant':
      return [
        // The model's reasoning, shown apart from its answer (it is sent back to it with tools).
        ...(typeof m.reasoning_content === 'string' && m.reasoning_content !== '' ? [['reasoning', m.reasoning_content]] : []),
        ...(m.content !== null && m.content !== '' ? [['model', m.content]] : []),
        ...(m.tool_calls ?? []).map((c) => ['tool call', clean(`${c.function.name} ${c.function.arguments}`)]),
      ];
    case 'tool':
      return [['tool result', m.content ?? '']];
    default:
      return [[String(m.role), m.content ?? '']];
  }
}
