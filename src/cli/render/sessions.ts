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

export function transcriptText(result: Result<'sessions.get'>): string {
  return (result.omittedMessages > 0 ? [`[${result.omittedMessages} earlier messages not shown]`] : [])
    .concat(
      result.messages.map((m) => {
        if (m.role === 'tool') return `tool (${clean(m.tool_call_id ?? '')}): ${oneLine(m.content ?? '', 200)}`;
        const calls = (m.tool_calls ?? []).map((c) => `\n  -> ${clean(c.function.name)} ${clean(c.function.arguments)}`).join('');
        return `${m.role}: ${cleanBlock(m.content ?? '', '  ')}${calls}`;
      }),
    )
    .join('\n');
}

export function sessionDeletedText(id: string): string {
  return `deleted ${clean(id)}`;
}
