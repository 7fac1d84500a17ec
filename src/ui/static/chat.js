// Chat: sessions with the model, a request, the answer as it streams (model.delta), the
// task's approvals answered inline (tool calls and host tools alike, the same cards as the
// Approvals page), its tool calls' ends, and the transcript (sessions.get).
import { html, useEffect, useState } from './html.js';
import { ApprovalCard } from './approvals.js';
import { chat, loadSessions } from './chat-store.js';
import { messageRows, taskEndLine } from './chat-text.js';
import { errorText } from './format.js';
import { call, useStore } from './store.js';

function Sessions({ selected, onSelect }) {
  const [title, setTitle] = useState('');
  const [error, setError] = useState(null);
  const create = async (e) => {
    e.preventDefault();
    try {
      const { session } = await call('sessions.create', title !== '' ? { title } : {});
      setTitle('');
      onSelect(session.id);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return html`<section class="sessions" aria-labelledby="sessions-title">
    <h3 id="sessions-title">Sessions</h3>
    ${chat.sessions.length === 0 ? html`<p class="empty">no sessions</p>` : html`<ul>${chat.sessions.map((s) => html`<li key=${s.id}>
      <button type="button" class="link" aria-pressed=${s.id === selected} onClick=${() => onSelect(s.id)}>${s.title}</button> <span class="note">${s.messageCount} messages</span>
    </li>`)}</ul>`}
    <form onSubmit=${create} aria-label="New session">
      <label>Title (optional) <input name="title" maxlength="200" value=${title} onInput=${(e) => setTitle(e.currentTarget.value)} /></label>
      <button type="submit">New session</button>
    </form>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
  </section>`;
}

function Transcript({ data }) {
  if (data === null) return html`<p>Loading the transcript…</p>`;
  if (data.error !== undefined) return html`<p class="error">${data.error}</p>`;
  const rows = data.messages.flatMap(messageRows);
  return html`<ol class="transcript" aria-label="transcript">
    ${data.omittedMessages > 0 ? html`<li class="note">[${data.omittedMessages} older messages not shown]</li>` : null}
    ${rows.map(([who, text], i) => html`<li key=${i} class=${`msg msg-${who.replace(' ', '-')}`}><span class="who">${who}:</span> <span class="text">${text}</span></li>`)}
  </ol>`;
}

/**
 * The running task of this page: its streamed answer, inline approvals and calls. Once it
 * ends the transcript holds it all; only an end other than completed is still said.
 */
function LiveTask({ taskId }) {
  const store = useStore();
  const t = chat.tasks.get(taskId);
  const running = t === undefined || t.state.status === 'running' || t.state.status === 'awaiting_approval';
  if (!running) return t.state.status === 'completed' ? null : html`<p class="error" role="alert">${taskEndLine(t.state)}</p>`;
  const approvals = [...store.approvals.values()].filter((e) => e.approval.requester.taskId === taskId);
  return html`<section class="live" aria-labelledby="live-title">
    <h4 id="live-title">${t?.state.status === 'awaiting_approval' ? 'Waiting for your answer' : 'The model is answering…'}</h4>
    ${approvals.map((e) => html`<${ApprovalCard} key=${e.approval.id} entry=${e} />`)}
    ${t !== undefined && t.reasoning !== '' ? html`<details class="reasoning" open><summary>The model's reasoning</summary><div aria-live="off">${t.reasoning}</div></details>` : null}
    ${(t?.calls ?? []).map((line, i) => html`<p class="note call-end" key=${i}>${line}</p>`)}
    <div class="stream" aria-live="polite" aria-label="the answer as it streams">${t?.text ?? ''}</div>
  </section>`;
}

/** Deleting a session: asked on the page first; its running task is cancelled by the daemon. */
function DeleteSession({ sessionId, title, onDeleted }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState(null);
  const remove = () => call('sessions.delete', { id: sessionId }).then(onDeleted, (err) => setError(errorText(err)));
  return html`<div class="actions">
    ${asking
      ? html`<span role="group" aria-label="confirm deleting the session">Delete ${title} and its transcript? <button type="button" class="deny" onClick=${remove}>Yes, delete it</button> <button type="button" onClick=${() => setAsking(false)}>Keep it</button></span>`
      : html`<button type="button" onClick=${() => setAsking(true)}>Delete this session…</button>`}
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
  </div>`;
}

function Conversation({ sessionId, onDeleted }) {
  useStore();
  const [data, setData] = useState(null);
  const [text, setText] = useState('');
  const [taskId, setTaskId] = useState(null);
  const [error, setError] = useState(null);
  /** Bumped on a send, so the request shows in the transcript at once. */
  const [sent, setSent] = useState(0);
  useEffect(() => {
    call('sessions.get', { id: sessionId }).then((got) => {
      setData(got);
      // A task already running (sent from a terminal, or before a reload) is followed here too.
      const last = got.tasks.at(-1);
      if (last !== undefined && (last.state.status === 'running' || last.state.status === 'awaiting_approval')) setTaskId((id) => id ?? last.id);
    }, (err) => setData({ error: errorText(err) }));
  }, [sessionId, chat.ended, sent]);
  const t = taskId !== null ? chat.tasks.get(taskId) : undefined;
  const running = taskId !== null && (t === undefined || t.state.status === 'running' || t.state.status === 'awaiting_approval');
  const send = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      const { task } = await call('sessions.send', { id: sessionId, text });
      setText('');
      setTaskId(task.id);
      setSent((n) => n + 1);
    } catch (err) {
      setError(errorText(err));
    }
  };
  const cancel = () => call('sessions.cancel', { id: sessionId }).catch((err) => setError(errorText(err)));
  return html`<section class="conversation" aria-labelledby="conversation-title">
    <h3 id="conversation-title">${data?.session?.title ?? 'Session'} <span class="note">(${sessionId})</span></h3>
    <${DeleteSession} sessionId=${sessionId} title=${data?.session?.title ?? 'this session'} onDeleted=${onDeleted} />
    <${Transcript} data=${data} />
    ${taskId !== null ? html`<${LiveTask} taskId=${taskId} />` : null}
    <form class="send" onSubmit=${send} aria-label="Send a request">
      <label>Your request <textarea name="request" rows="3" required value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea></label>
      <div class="actions">
        <button type="submit" disabled=${running}>Send</button>
        ${running ? html`<button type="button" onClick=${cancel}>Cancel the request</button>` : null}
      </div>
    </form>
    ${error !== null ? html`<p class="error" role="alert">${error}</p>` : null}
  </section>`;
}

export function ChatPage() {
  useStore();
  const [selected, setSelected] = useState(null);
  // Reloaded when a task ends, for the message counts.
  useEffect(() => void loadSessions().catch(() => undefined), [chat.ended]);
  return html`<section aria-labelledby="chat-title">
    <h2 id="chat-title">Chat</h2>
    <p class="note">The model sees the active tools; every call it asks for waits for your answer here (or in any other client).</p>
    <div class="chat">
      <${Sessions} selected=${selected} onSelect=${setSelected} />
      ${selected !== null ? html`<${Conversation} key=${selected} sessionId=${selected} onDeleted=${() => setSelected(null)} />` : html`<p class="empty">Pick or start a session.</p>`}
    </div>
  </section>`;
}
