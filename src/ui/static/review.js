// Held tools (changed or added since the service's tools were trusted): what changed, field
// by field, the description's word diff and the daemon's warnings, then accept at exactly
// the tool-list version shown (tools.accept; a newer list makes it APPROVAL_STALE). Every
// name, description and schema here is the server's: text only.
import { html, useState } from './html.js';
import { clean } from '../../core/index.js';
import { errorText, pretty } from './format.js';
import { PanelError, call } from './store.js';

async function loadReview(serviceId, tries = 3) {
  let cursor = null;
  let first = null;
  const tools = [];
  do {
    const page = await call('tools.review', { serviceId, ...(cursor !== null ? { cursor } : {}) });
    first ??= page;
    // A page from a newer list than the first: the review is no longer one version; start again.
    if (page.toolListVersion !== first.toolListVersion) {
      if (tries <= 1) throw new PanelError({ code: 'APPROVAL_STALE', message: 'the tool list kept changing while it was read: review again' });
      return loadReview(serviceId, tries - 1);
    }
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return { toolListVersion: first.toolListVersion, tools };
}

function DescriptionDiff({ parts }) {
  return html`<p class="diff" aria-label="the description, old and new words">${parts.map((p, i) =>
    p.op === 'added' ? html`<ins key=${i}>${p.text}</ins>` : p.op === 'removed' ? html`<del key=${i}>${p.text}</del>` : html`<span key=${i}>${p.text}</span>`)}</p>`;
}

function HeldTool({ tool, index, checked, setChecked }) {
  const id = `held-${index}`;
  return html`<section class="held-tool" aria-labelledby=${id}>
    <h5 id=${id}><code>${clean(tool.name)}</code>: ${tool.pin === 'added' ? 'added since the tools were trusted' : 'changed since it was trusted'}</h5>
    ${tool.warnings.length > 0
      ? html`<div class="claims" role="group" aria-label=${`warnings about ${tool.name}`}><ul class="warnings">${tool.warnings.map((w, i) => html`<li key=${i}>WARNING: ${clean(w.message)}</li>`)}</ul></div>`
      : null}
    ${tool.descriptionDiff !== null ? html`<p>The description, removed words struck through, added ones underlined (hidden characters shown as escapes such as \\u200b):</p><${DescriptionDiff} parts=${tool.descriptionDiff} />` : null}
    ${tool.changes.length > 0
      ? html`<table class="changes"><caption>Every field that differs</caption>
          <thead><tr><th scope="col">field</th><th scope="col">was</th><th scope="col">is now</th></tr></thead>
          <tbody>${tool.changes.map((c, i) => html`<tr key=${i}><th scope="row"><code>${c.path}</code></th>
            <td><pre class="json">${'before' in c ? pretty(c.before) : '(absent)'}</pre></td><td><pre class="json">${'after' in c ? pretty(c.after) : '(absent)'}</pre></td></tr>`)}</tbody>
        </table>`
      : null}
    <details><summary>The whole new definition (from the server, not verified)</summary><pre class="json">${pretty(tool.definition)}</pre></details>
    <label class="check"><input type="checkbox" checked=${checked} onChange=${(e) => setChecked(e.currentTarget.checked)} /> Accept ${tool.name} as shown</label>
  </section>`;
}

/** The review of one service's held tools, opened by the human. */
export function HeldReview({ service, held }) {
  const [review, setReview] = useState(null);
  const [chosen, setChosen] = useState(new Set());
  const [message, setMessage] = useState(null);
  const [busy, setBusy] = useState(false);
  const open = async () => {
    setMessage(null);
    try {
      const loaded = await loadReview(service.id);
      setReview(loaded);
      setChosen(new Set(loaded.tools.map((t) => t.name)));
    } catch (err) {
      setMessage({ ok: false, text: errorText(err) });
    }
  };
  const accept = async () => {
    setBusy(true);
    setMessage(null);
    try {
      const tools = review.tools.filter((t) => chosen.has(t.name)).map((t) => ({ name: t.name, digest: t.digest }));
      const done = await call('tools.accept', { serviceId: service.id, toolListVersion: review.toolListVersion, tools });
      setReview(null);
      setMessage({ ok: true, text: `Accepted: ${done.accepted.join(', ')}. ${done.stillHeld} still held.` });
    } catch (err) {
      const stale = err.code === 'APPROVAL_STALE';
      if (stale) setReview(null);
      setMessage({ ok: false, text: stale ? `${errorText(err)}: the tools changed since this review; nothing was accepted. Review them again.` : errorText(err) });
    } finally {
      setBusy(false);
    }
  };
  if (held === 0 && review === null && message === null) return null;
  const set = (name) => (on) => {
    const next = new Set(chosen);
    if (on) next.add(name);
    else next.delete(name);
    setChosen(next);
  };
  return html`<section class="review" aria-labelledby="review-title">
    <h4 id="review-title">Held tools of ${service.name}</h4>
    <p class="note">These tools changed or appeared since you trusted ${service.name}: they cannot be called, and no model sees them, until you accept them.</p>
    ${review === null
      ? held > 0 ? html`<button type="button" onClick=${open}>Review the ${held} held tools…</button>` : null
      : html`<p>Tool list version ${review.toolListVersion}: ${review.tools.length} held.</p>
          ${review.tools.map((t, i) => html`<${HeldTool} key=${t.name} tool=${t} index=${i} checked=${chosen.has(t.name)} setChecked=${set(t.name)} />`)}
          <div class="actions">
            <button type="button" class="approve" disabled=${busy || chosen.size === 0} onClick=${accept}>Accept the ${chosen.size} selected as shown</button>
            <button type="button" onClick=${() => setReview(null)}>Close</button>
          </div>`}
    ${message !== null ? html`<p class=${message.ok ? 'note' : 'error'} role=${message.ok ? 'status' : 'alert'}>${message.text}</p>` : null}
  </section>`;
}
