// The Chat page's state, kept from the moment the panel opens: sessions, and per task the
// streamed answer (model.delta), its tool calls' ends and its state (task.state).
import { call, changed, onDaemonEvent } from './store.js';
import { callEndLine } from './chat-text.js';

export const chat = {
  sessions: [],
  sessionsLoaded: false,
  /** taskId -> { sessionId, text, reasoning, calls: string[], state } */
  tasks: new Map(),
  /** Bumped when a task ends, so the transcript shown reloads. */
  ended: 0,
};

export async function loadSessions() {
  chat.sessions = (await call('sessions.list')).sessions;
  chat.sessionsLoaded = true;
  changed();
}

/** How many tasks' streamed answers a page keeps (the transcript has them all). */
const KEEP_TASKS = 50;

function task(taskId, sessionId) {
  let entry = chat.tasks.get(taskId);
  if (entry === undefined) {
    entry = { sessionId, text: '', reasoning: '', calls: [], state: { status: 'running' } };
    chat.tasks.set(taskId, entry);
    // A Map keeps insertion order: the first key is the oldest task.
    if (chat.tasks.size > KEEP_TASKS) chat.tasks.delete(chat.tasks.keys().next().value);
  }
  return entry;
}

onDaemonEvent((event) => {
  switch (event.type) {
    case 'session.created':
      if (!chat.sessions.some((s) => s.id === event.session.id)) chat.sessions = [...chat.sessions, event.session];
      break;
    case 'session.deleted':
      chat.sessions = chat.sessions.filter((s) => s.id !== event.sessionId);
      break;
    case 'model.delta':
      // The reasoning is kept apart from the answer, and shown apart.
      if (event.kind === 'content') task(event.taskId, event.sessionId).text += event.text;
      else task(event.taskId, event.sessionId).reasoning += event.text;
      break;
    case 'tool.call.finished':
    case 'tool.call.failed':
      if (event.call.requester.taskId !== null && event.call.requester.sessionId !== null) task(event.call.requester.taskId, event.call.requester.sessionId).calls.push(callEndLine(event));
      break;
    case 'task.state': {
      task(event.task.id, event.sessionId).state = event.task.state;
      if (event.task.state.status !== 'running' && event.task.state.status !== 'awaiting_approval') chat.ended += 1;
      break;
    }
    default:
      break;
  }
});
