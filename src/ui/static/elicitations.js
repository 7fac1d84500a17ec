// A server asking the user for input (MCP elicitation), on the Approvals page. Everything in
// it but the service's registered name is the server's: the message, the field names,
// titles, descriptions and options are shown as text, apart and labelled. Form mode builds
// the inputs from the requested schema (flat: text, number, yes/no, one or several of a
// list); URL mode shows the whole URL and its host, and only the human's click opens it.
import { html, useState } from './html.js';
import { clean } from '../../core/index.js';
import { errorText } from './format.js';
import { safeUrl } from './login.js';
import { answerElicitation } from './store.js';

/** The options of a one-of field: enum (with enumNames), or oneOf/anyOf of {const, title}. */
function optionsOf(prop) {
  if (prop === null || typeof prop !== 'object') return null;
  if (Array.isArray(prop.enum)) return prop.enum.map((value, i) => ({ value: String(value), label: clean(String(prop.enumNames?.[i] ?? value)) }));
  const list = Array.isArray(prop.oneOf) ? prop.oneOf : Array.isArray(prop.anyOf) ? prop.anyOf : null;
  return list === null ? null : list.filter((o) => o !== null && typeof o === 'object' && 'const' in o).map((o) => ({ value: String(o.const), label: clean(String(o.title ?? o.const)) }));
}

/** Each field: its name, schema, kind and whether it is required, in the server's order. */
function fieldsOf(schema) {
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  return Object.entries(schema?.properties ?? {}).map(([name, prop]) => {
    const p = prop !== null && typeof prop === 'object' ? prop : {};
    const options = p.type === 'array' ? optionsOf(p.items) : optionsOf(p);
    const kind = p.type === 'array' ? 'many' : options !== null ? 'one' : p.type === 'boolean' ? 'yesno' : p.type === 'number' || p.type === 'integer' ? 'number' : 'text';
    return { name, prop: p, kind, options: options ?? [], required: required.has(name) };
  });
}

function initialValue(field) {
  const d = field.prop.default;
  if (field.kind === 'many') return Array.isArray(d) ? d.map(String) : [];
  if (field.kind === 'yesno') return d === true;
  return d === undefined ? '' : String(d);
}

/** What is sent: the fields given (an empty optional one is left out: the daemon fills its default). */
function contentOf(fields, values) {
  const content = {};
  for (const f of fields) {
    const v = values[f.name];
    if (f.kind === 'yesno' || f.kind === 'many') content[f.name] = v;
    else if (v === '' && !f.required) continue;
    // A number that does not parse goes as typed: the daemon's check says what is wrong.
    else if (f.kind === 'number') content[f.name] = v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
    else content[f.name] = v;
  }
  return content;
}

function FieldInput({ field, id, value, set }) {
  const label = `${clean(String(field.prop.title ?? field.name))}${field.required ? ' (required)' : ''}`;
  const described = typeof field.prop.description === 'string' ? `${id}-d` : undefined;
  const about = described !== undefined ? html`<span class="field-about" id=${described}>${field.prop.description}</span>` : null;
  if (field.kind === 'many') {
    const toggle = (v, on) => set(on ? [...value, v] : value.filter((x) => x !== v));
    return html`<fieldset class="choices" aria-describedby=${described}><legend>${label}</legend>${about}
      ${field.options.map((o) => html`<label key=${o.value}><input type="checkbox" checked=${value.includes(o.value)} onChange=${(e) => toggle(o.value, e.currentTarget.checked)} /> ${o.label}</label>`)}
    </fieldset>`;
  }
  if (field.kind === 'yesno') {
    return html`<div class="field"><label><input type="checkbox" id=${id} aria-describedby=${described} checked=${value} onChange=${(e) => set(e.currentTarget.checked)} /> ${label}</label>${about}</div>`;
  }
  const input = field.kind === 'one'
    ? html`<select id=${id} aria-describedby=${described} aria-required=${field.required ? 'true' : undefined} value=${value} onChange=${(e) => set(e.currentTarget.value)}>
        ${field.required ? null : html`<option value="">(none)</option>`}
        ${field.options.map((o) => html`<option key=${o.value} value=${o.value}>${o.label}</option>`)}
      </select>`
    : html`<input id=${id} aria-describedby=${described} aria-required=${field.required ? 'true' : undefined} inputmode=${field.kind === 'number' ? 'decimal' : undefined} autocomplete="off" value=${value} onInput=${(e) => set(e.currentTarget.value)} />`;
  return html`<div class="field"><label for=${id}>${label}</label>${input}${about}</div>`;
}

function FormMode({ entry, open }) {
  const { elicitation } = entry;
  const [fields] = useState(() => fieldsOf(elicitation.requestedSchema));
  const [values, setValues] = useState(() => Object.fromEntries(fields.map((f) => [f.name, initialValue(f)])));
  const submit = (e) => {
    e.preventDefault();
    void answerElicitation(elicitation.id, 'accept', contentOf(fields, values));
  };
  return html`<form class="elicit-form" onSubmit=${submit} aria-label=${`Your answer to ${elicitation.service.name}`}>
    <div class="claims" role="group" aria-label="the fields the server asks for, not verified">
      <p class="claims-label">the fields it asks for (the server's names and words, not verified):</p>
      ${fields.map((f, i) => html`<${FieldInput} key=${f.name} field=${f} id=${`${elicitation.id}-f${i}`} value=${values[f.name]} set=${(v) => setValues({ ...values, [f.name]: v })} />`)}
    </div>
    ${open ? html`<${Answers} entry=${entry} accept="Send these values to the server" />` : null}
  </form>`;
}

function UrlMode({ entry, open }) {
  const { elicitation } = entry;
  const url = safeUrl(elicitation.url ?? '');
  return html`<div class="login-url" role="group" aria-label="the page it asks you to open">
    ${url === null
      ? html`<p class="error">The URL is not an http(s) URL, so it is not offered as a link: <code>${elicitation.url}</code></p>`
      : html`<p>It asks you to open a page on <strong>${url.host}</strong>${url.protocol === 'http:' ? ' (not encrypted: http)' : ''}. Check that this is who you expect before you enter anything there.</p>
          <pre class="json" aria-label="the whole URL">${url.href}</pre>
          <p><a href=${url.href} target="_blank" rel="noopener noreferrer">Open the page on ${url.host}</a></p>`}
    ${open ? html`<${Answers} entry=${entry} accept=${url === null ? null : 'Accept (I will open it)'} />` : null}
  </div>`;
}

/** accept (a submit in form mode), decline, cancel. */
function Answers({ entry, accept }) {
  const id = entry.elicitation.id;
  const form = entry.elicitation.mode === 'form';
  return html`<div class="actions">
    ${accept !== null ? html`<button type=${form ? 'submit' : 'button'} class="approve" onClick=${form ? undefined : () => answerElicitation(id, 'accept')}>${accept}</button>` : null}
    <button type="button" class="deny" onClick=${() => answerElicitation(id, 'decline')}>Decline</button>
    <button type="button" onClick=${() => answerElicitation(id, 'cancel')}>Cancel (ask me later)</button>
  </div>`;
}

function outcomeText(entry) {
  const e = entry.elicitation;
  if (entry.answering) return 'Sending your answer…';
  if (e.status === 'pending') return null;
  const word = { accepted: 'accepted', declined: 'declined', cancelled: 'cancelled' }[e.status];
  if (entry.here) return `${word[0].toUpperCase()}${word.slice(1)} here.`;
  if (e.status === 'cancelled' && e.by === null) return `Cancelled: ${e.reason ?? 'withdrawn'}. This request is withdrawn.`;
  if (e.status === 'answered') return 'Answered elsewhere. This request is withdrawn.';
  return `Answered elsewhere: ${word}${e.by !== null ? ` by ${e.by}` : ''}. This request is withdrawn.`;
}

export function ElicitationCard({ entry }) {
  const { elicitation: e } = entry;
  const titleId = `el-${e.id}`;
  const open = e.status === 'pending' && !entry.answering;
  const asked = e.owners.map((o) => `${o.clientId}${o.sessionId !== null ? `, session ${o.sessionId}` : ''}`).join('; ');
  const outcome = outcomeText(entry);
  return html`<article class=${`card elicitation ${e.status === 'pending' ? 'pending' : 'resolved'}`} aria-labelledby=${titleId} data-elicitation=${e.id}>
    <p class="kind">request for input ${e.id}: ${e.mode === 'url' ? 'open a page' : 'fill in a form'}</p>
    <h3 id=${titleId} class="question">${e.service.name} asks you for input</h3>
    <dl class="fields"><div><dt>during a call of</dt><dd>${asked || '(no call)'}</dd></div></dl>
    <div class="claims" role="group" aria-label="the server's message, not verified">
      <p class="claims-label">the server's message, not verified:</p>
      <p class="server-text">${e.message}</p>
    </div>
    ${e.mode === 'url' ? html`<${UrlMode} entry=${entry} open=${open} />` : html`<${FormMode} entry=${entry} open=${open} />`}
    ${entry.error !== null ? html`<p class="error" role="alert">${errorText(entry.error)}</p>` : null}
    ${outcome !== null ? html`<p class="outcome" role="status">${outcome}</p>` : null}
  </article>`;
}
