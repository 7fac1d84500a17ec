import type { Result, SessionInfo } from '../../core/index.js';
import { clean, cleanBlock, oneLine, table } from '../render.js';
import { describeTaskState } from './events.js';

/** Model sessions and their transcripts. */

export function sessionsTable(list: readonly SessionInfo[]): string {
  if (list.length === 0) return 'no sessions';
  return table(
    ['ID', 'TITLE', 'MESSAGES', 'LAST TASK', 'UPDATED'],
    list.map((s) => [s.id, oneLine(s.title, 40), String(s.messageCount), s.lastTask === null ? '-' : describeTaskState(s.lastTask.state), s.updatedAt]),
  );
}

/** -o wide: the task's id and rounds, and when the session was created. */
export function sessionsWideTable(list: readonly SessionInfo[]): string {
  if (list.length === 0) return 'no sessions';
  return table(
    ['ID', 'TITLE', 'MESSAGES', 'LAST TASK', 'TASK ID', 'ROUNDS', 'CREATED', 'UPDATED'],
    list.map((s) => [
      s.id,
      oneLine(s.title, 60),
      String(s.messageCount),
      s.lastTask === null ? '-' : describeTaskState(s.lastTask.state),
      s.lastTask?.id ?? '-',
      s.lastTask === null ? '-' : String(s.lastTask.rounds),
      s.createdAt,
      s.updatedAt,
    ]),
  );
}

/** Model-facing tool names in a transcript: shown as service/tool (labels come cleaned). */
type ToolLabel = (modelName: string) => string;

/**
 * A transcript: each message, and each tool call as `service/tool ARGS` (the model-facing
 * name only with -o wide, with the call ids and the model's reasoning).
 */
export function transcriptText(result: Result<'sessions.get'>, label: ToolLabel = clean, wide = false): string {
  const callNames = new Map<string, string>();
  for (const m of result.messages) for (const c of m.tool_calls ?? []) callNames.set(c.id, c.function.name);
  const shown = (modelName: string): string => (wide ? `${label(modelName)} [${clean(modelName)}]` : label(modelName));
  return (result.omittedMessages > 0 ? [`[${result.omittedMessages} earlier messages not shown]`] : [])
    .concat(
      result.messages.map((m) => {
        if (m.role === 'tool') {
          const id = m.tool_call_id ?? '';
          const name = callNames.get(id);
          return `tool (${name !== undefined ? shown(name) : 'an earlier call'}${wide ? `, ${clean(id)}` : ''}): ${oneLine(m.content ?? '', 200)}`;
        }
        const reasoning = wide && m.reasoning_content !== undefined && m.reasoning_content !== '' ? `\n  (reasoning) ${cleanBlock(m.reasoning_content, '  ')}` : '';
        const calls = (m.tool_calls ?? []).map((c) => `\n  -> ${shown(c.function.name)} ${clean(c.function.arguments)}${wide ? ` (${clean(c.id)})` : ''}`).join('');
        return `${m.role}: ${cleanBlock(m.content ?? '', '  ')}${reasoning}${calls}`;
      }),
    )
    .join('\n');
}

export function sessionDeletedText(id: string): string {
  return `deleted ${clean(id)}`;
}
