// Approvals: every pending approval from any client, live. What the daemon vouches for comes
// first (service, the bound tool, the exact arguments), the server's claims apart and
// labelled; the question names the bound tool again, last thing before the buttons.
import { html } from './html.js';
import { clean } from '../../core/index.js';
import { KIND_TEXT, approvalQuestion, argumentsWarning, networkTarget, pretty, registeredTool, resolvedText, serverClaims } from './format.js';
import { ElicitationCard } from './elicitations.js';
import { enableNotifications, respond, useStore } from './store.js';

function Claims({ approval }) {
  const rows = serverClaims(approval);
  if (rows.length === 0) return null;
  return html`<div class="claims" role="group" aria-label="from the server, not verified">
    <p class="claims-label">from the server, not verified:</p>
    <dl class="fields">${rows.map(([k, v]) => html`<div key=${k}><dt>${k}</dt><dd>${v}</dd></div>`)}</dl>
  </div>`;
}

// Facts about the tool's definition (hidden or direction-changing characters, other services' tool names), never left out.
function Warnings({ approval }) {
  const warnings = approval.kind === 'tool_call' ? (approval.summary.warnings ?? []) : [];
  if (warnings.length === 0) return null;
  return html`<div class="claims" role="group" aria-label="warnings about the tool's definition">
    <p class="claims-label">warnings about the tool's definition:</p>
    <ul>${warnings.map((w, i) => html`<li key=${i}>WARNING: ${clean(w.message)}</li>`)}</ul>
  </div>`;
}

/** Hidden or direction-changing characters in the arguments: said next to them, never left out. */
function ArgumentsWarning({ args }) {
  const warning = argumentsWarning(args);
  return warning === null ? null : html`<p class="warning" role="note" aria-label="hidden characters in the arguments">${warning}</p>`;
}

function Outcome({ entry }) {
  if (entry.answering) return html`<p class="outcome" role="status">Sending your answer…</p>`;
  if (entry.resolved === null) return null;
  return html`<p class="outcome" role="status">${resolvedText(entry.resolved, entry.here)}</p>`;
}

export function ApprovalCard({ entry }) {
  const { approval } = entry;
  const s = approval.summary;
  const titleId = `q-${approval.id}`;
  const tool = clean(registeredTool(approval));
  const open = entry.resolved === null && !entry.answering;
  const network = approval.kind === 'network.connect';
  return html`<article class=${`card ${entry.resolved === null ? 'pending' : 'resolved'}`} aria-labelledby=${titleId} data-approval=${approval.id}>
    <p class="kind">approval ${clean(approval.id)}: ${KIND_TEXT[approval.kind] ?? clean(approval.kind)}</p>
    <dl class="fields">
      <div><dt>service</dt><dd>${clean(s.serviceName)}</dd></div>
      ${network
        ? html`<div><dt>connect to</dt><dd><code>${networkTarget(approval)}</code> (the connection waits for this answer; Approve lets this one through, Always allow grants it for good: revoke with wispctl mcp allow ${clean(s.serviceName)} ${networkTarget(approval)} --revoke)</dd></div>`
        : html`<div><dt>tool</dt><dd><code>${tool}</code></dd></div>`}
      ${approval.kind !== 'tool_call' && s.title !== null ? html`<div><dt>what</dt><dd>${clean(s.title)}</dd></div>` : null}
      <div><dt>arguments</dt><dd><pre class="json" aria-label="arguments">${pretty(s.arguments)}</pre><${ArgumentsWarning} args=${s.arguments} /></dd></div>
      <div><dt>asked by</dt><dd>${clean(approval.requester.clientId)}${approval.requester.sessionId !== null ? `, session ${clean(approval.requester.sessionId)}` : ''}</dd></div>
    </dl>
    <${Claims} approval=${approval} />
    <${Warnings} approval=${approval} />
    <h3 id=${titleId} class="question">${approvalQuestion(approval)}</h3>
    ${open
      ? html`<div class="actions">
          <button type="button" class="approve" aria-label=${`Approve: ${approvalQuestion(approval)}`} onClick=${() => respond(approval.id, 'approve')}>Approve</button>
          ${network ? html`<button type="button" class="approve" aria-label=${`Always allow: ${approvalQuestion(approval)}`} onClick=${() => respond(approval.id, 'approve', 'always')}>Always allow</button>` : null}
          <button type="button" class="deny" aria-label=${`Deny: ${approvalQuestion(approval)}`} onClick=${() => respond(approval.id, 'deny')}>Deny</button>
        </div>`
      : null}
    ${entry.error !== null ? html`<p class="error" role="alert">${entry.error}</p>` : null}
    <${Outcome} entry=${entry} />
  </article>`;
}

function NotifyToggle({ on }) {
  if (typeof Notification === 'undefined') return null;
  if (on) return html`<p class="note" role="status">Desktop notifications are on for this page.</p>`;
  if (Notification.permission === 'denied') return html`<p class="note">Desktop notifications are blocked for this page in the browser's settings.</p>`;
  return html`<button type="button" onClick=${enableNotifications}>Notify me when an approval arrives</button>`;
}

/** Servers asking the user for input: open ones first, then the answered ones still kept. */
function Elicitations({ entries }) {
  const open = entries.filter((e) => e.elicitation.status === 'pending' || e.answering);
  const done = entries.filter((e) => !open.includes(e)).reverse();
  return html`<section aria-labelledby="elicitations-title">
    <h2 id="elicitations-title">Requests for input</h2>
    <p class="note">A server may ask you for input while one of its tools runs. What it asks and how it names it are its own words; no model sees these.</p>
    <div aria-live="polite">
      ${open.length === 0 ? html`<p class="empty">no open requests for input</p>` : open.map((e) => html`<${ElicitationCard} key=${e.elicitation.id} entry=${e} />`)}
    </div>
    ${done.map((e) => html`<${ElicitationCard} key=${e.elicitation.id} entry=${e} />`)}
  </section>`;
}

export function ApprovalsPage() {
  const store = useStore();
  const entries = [...store.approvals.values()];
  const pending = entries.filter((e) => e.resolved === null || e.answering);
  const resolved = entries.filter((e) => e.resolved !== null && !e.answering).reverse();
  return html`<section aria-labelledby="approvals-title">
    <h2 id="approvals-title">Approvals</h2>
    <${NotifyToggle} on=${store.notify} />
    <p class="note">Any client may answer; the first answer wins. Titles and hints are what the server claims: they are shown, never obeyed.</p>
    <div aria-live="polite">
      ${pending.length === 0 ? html`<p class="empty">no open approvals</p>` : pending.map((e) => html`<${ApprovalCard} key=${e.approval.id} entry=${e} />`)}
    </div>
    ${resolved.length > 0 ? html`<h2>Answered</h2>${resolved.map((e) => html`<${ApprovalCard} key=${e.approval.id} entry=${e} />`)}` : null}
    <${Elicitations} entries=${[...store.elicitations.values()]} />
  </section>`;
}
